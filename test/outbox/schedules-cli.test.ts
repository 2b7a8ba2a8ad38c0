/**
 * `antler schedules` (the real CLI, in a child process) against a running gateway: the table lists a
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
    // Each CLI run starts a process (seconds on a loaded machine): the changes in between go through the API.
    const paused = await cli("pause", "cfg:standup");
    expect(paused.output).toMatch(/cfg:standup .* paused/);
    const resumed = await fetch(`${gw.url}/api/schedules/cfg:standup/resume`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(((await resumed.json()) as { state: string }).state).toBe("active");
    expect((await cli("delete", "cfg:standup")).output).toBe("deleted cfg:standup\n");
    const list = await fetch(`${gw.url}/api/schedules`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(((await list.json()) as { schedules: unknown[] }).schedules).toEqual([]);
    const missing = await cli("pause", "nope");
    expect(missing.code).toBe(1);
    expect(missing.output).toMatch(/HTTP 404: no schedule with id nope/);
  }, 150_000);
});
