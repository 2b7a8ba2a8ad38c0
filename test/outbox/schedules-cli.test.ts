/**
 * `antler schedules` (the real CLI, through tsx) against a running gateway: the table lists a
 * config job with its next fire, and pause, resume and delete change it through the admin API.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../contract/gateway.js";
import { runCli } from "../helpers/cli.js";

const TOKEN = "cli-admin-token";
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

describe("antler schedules", () => {
  it("lists, pauses, resumes and deletes schedules of a running gateway", async () => {
    gw = await startTestGateway({
      channels: { web: { enabled: true } },
      server: { admin_token: TOKEN },
      sections: {
        schedules: {
          jobs: {
            standup: {
              cron: "0 9 * * 1-5",
              tz: "Europe/Berlin",
              channel: "web",
              target: { chat: "c1/standup" },
              message: "Stand-up!",
            },
          },
        },
      },
    });
    const cli = (...args: string[]) => runCli(["schedules", ...args, "--url", gw?.url ?? "", "--token", TOKEN]);
    const listed = await cli();
    expect(listed.code).toBe(0);
    expect(listed.output).toMatch(
      /cfg:standup\s+standup\s+web\s+0 9 \* \* 1-5 Europe\/Berlin\s+active\s+\d{4}-\d\d-\d\d \d\d:00:00/,
    );
    const paused = await cli("pause", "cfg:standup");
    expect(paused.output).toMatch(/cfg:standup .* paused/);
    expect((await cli("resume", "cfg:standup")).output).toMatch(/cfg:standup .* active/);
    expect((await cli("delete", "cfg:standup")).output).toBe("deleted cfg:standup\n");
    expect((await cli()).output).toBe("No schedules.\n");
    const missing = await cli("pause", "nope");
    expect(missing.code).toBe(1);
    expect(missing.output).toMatch(/HTTP 404: no schedule with id nope/);
    const wrong = await runCli(["schedules", "--url", gw.url, "--token", "wrong"]);
    expect(wrong.code).toBe(1);
    expect(wrong.output).toMatch(/HTTP 401/);
  }, 150_000);
});
