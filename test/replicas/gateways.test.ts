/**
 * Two gateways in this process on one PostgreSQL schema, with the Telegram fake polling: only
 * the channel's leader polls, a message is answered once, and when the leader stops the other
 * takes the channel over and answers. The process-level acceptance (several `node dist/cli.js`
 * replicas, SIGKILL, load) is in test/cluster/.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ChannelReport } from "../../src/channels/registry.js";
import { eventually, startTestGateway, type TestGateway } from "../../src/testing/gateway.js";
import { startMockModel } from "../../src/testing/mock-model.js";
import { TelegramDriver } from "../fakes/telegram/driver.js";
import { freshSchema } from "../helpers/postgres.js";

const running: TestGateway[] = [];
let driver: TelegramDriver | undefined;
afterEach(async () => {
  for (const gw of running.splice(0)) await gw.stop(false);
  await driver?.close();
});

async function channelOf(gw: TestGateway): Promise<ChannelReport> {
  const res = await fetch(`${gw.url}/api/channels/telegram`);
  return (await res.json()) as ChannelReport;
}

describe("two replicas on PostgreSQL", () => {
  it("run a polling bot on one replica only, answer once, and hand the bot over when the leader stops", async () => {
    const { url } = await freshSchema("gw");
    const model = await startMockModel();
    driver = await TelegramDriver.start({ mode: "polling" });
    const channels = { telegram: driver.channelConfig({ gatewayUrl: "" }) };
    const storage = { kind: "postgres", url };
    const a = await startTestGateway({ channels, model, storage, replicaId: "replica-a" });
    running.push(a);
    const b = await startTestGateway({ channels, model, storage, replicaId: "replica-b" });
    running.push(b);
    const [ra, rb] = [await channelOf(a), await channelOf(b)];
    expect([ra.state, rb.state].sort()).toEqual(["running", "standby"]);
    expect(ra.leader).toBe("replica-a");
    expect(rb.leader).toBe("replica-a");
    expect(rb.reason).toMatch(/replica replica-a runs this channel/);
    const replicas = (await (await fetch(`${b.url}/api/replicas`)).json()) as {
      replicas: Array<{ id: string; leads: string[] }>;
    };
    expect(replicas.replicas.map((r) => [r.id, r.leads])).toEqual([
      ["replica-a", ["telegram"]],
      ["replica-b", []],
    ]);

    const page = await (await fetch(`${a.url}/`)).text();
    expect(page).toContain('<tr data-replica="replica-a">');
    expect(page).toContain('<tr data-replica="replica-b">');
    expect(await (await fetch(`${b.url}/`)).text()).toMatch(/replica replica-a runs this channel/);

    model.enqueue({ text: "First answer." });
    await driver.userSays("hello");
    await eventually(() => driver?.botMessages().some((m) => m.text === "First answer."), 15_000, "the first answer");

    // The leader stops cleanly: B takes the bot over at once (not after the lease runs out).
    await a.stop(false);
    running.splice(running.indexOf(a), 1);
    await eventually(async () => (await channelOf(b)).state === "running", 8_000, "B runs the channel");
    model.enqueue({ text: "Second answer." });
    await driver.userSays("still there?");
    await eventually(() => driver?.botMessages().some((m) => m.text === "Second answer."), 15_000, "the answer from B");
    expect(driver.botMessages().filter((m) => m.text === "First answer.")).toHaveLength(1);
    expect(model.requests.length).toBe(2);
  });
});
