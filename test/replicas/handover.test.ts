/**
 * Handing a polling bot over between two gateways on one PostgreSQL schema, with the Telegram
 * fake (each replica through a listener of its own, so every call names its replica) and an
 * agent whose reply waits at a gate the test opens:
 *
 * - a clean stop with a reply streaming stops the leader's polling at once, another replica
 *   polls within 1.5 s, and the reply still ends through the stopping replica's send path;
 * - a leader that loses its lease while alive stops polling at once and finishes its reply.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { ChannelReport } from "../../src/channels/registry.js";
import type { Harness } from "../../src/harness/types.js";
import { eventually, startTestGateway, type TestGateway } from "../../src/testing/gateway.js";
import { BOB, TelegramDriver } from "../fakes/telegram/driver.js";
import type { CallRecord, FakeTelegram } from "../fakes/telegram/index.js";
import { gatedAgent } from "../helpers/gated-agent.js";
import { freshSchema } from "../helpers/postgres.js";

const running: TestGateway[] = [];
let driver: TelegramDriver | undefined;
afterEach(async () => {
  for (const gw of running.splice(0)) await gw.stop(false);
  await driver?.close();
  driver = undefined;
}, 60_000);

async function replica(fake: FakeTelegram, name: string, url: string, harness: Harness): Promise<TestGateway> {
  const channels = {
    telegram: { ...(driver as TelegramDriver).channelConfig({ gatewayUrl: "" }), api_base: await fake.listenFor(name) },
  };
  const gw = await startTestGateway({
    channels,
    harness,
    storage: { kind: "postgres", url },
    replicaId: `replica-${name}`,
    // Long enough that the reply ends inside the drain on a loaded machine; the test opens the gate.
    gateway: { drain_ms: 15_000 },
  });
  running.push(gw);
  return gw;
}

async function stateOf(gw: TestGateway): Promise<ChannelReport["state"]> {
  const res = await fetch(`${gw.url}/api/channels/telegram`);
  return ((await res.json()) as ChannelReport).state;
}

const polls = (fake: FakeTelegram, client: string, since = 0): CallRecord[] =>
  fake.calls.filter((c) => c.method === "getUpdates" && c.client === client && c.at >= since);

/** Update ids a client was handed more than once. */
function fetchedTwice(fake: FakeTelegram, client: string): number[] {
  const ids = polls(fake, client).flatMap((c) => c.handed ?? []);
  return ids.filter((id, i) => ids.indexOf(id) !== i);
}

/** Two replicas, A leading the bot, and A streaming the first part of a reply to Alice. */
async function streamingOnLeader() {
  const { url } = await freshSchema("handover");
  driver = await TelegramDriver.start({ mode: "polling" });
  const fake = driver.fake;
  const agent = gatedAgent((text) => text === "hold");
  const a = await replica(fake, "a", url, agent.harness);
  const b = await replica(fake, "b", url, agent.harness);
  await eventually(async () => (await stateOf(a)) === "running", 10_000, "A runs the bot");
  expect(await stateOf(b)).toBe("standby");
  await driver.userSays("hold");
  await eventually(() => driver?.botMessages().some((m) => m.text === "Part one."), 15_000, "the first part of the reply");
  return { url, fake, agent, a, b };
}

describe("handing a polling bot over", () => {
  it("a clean stop gives the bot up at once while a reply streams, and the reply still ends", async () => {
    const { fake, agent, a, b } = await streamingOnLeader();
    const signal = Date.now();
    const stopping = a.gateway.stop();
    const first = await eventually(() => polls(fake, "b", signal)[0], 10_000, "B's first getUpdates");
    expect(first.at - signal).toBeLessThan(1_500);
    expect(polls(fake, "a", signal)).toEqual([]);

    // B answers another chat while A drains.
    await driver!.deliver(fake.dm(BOB, "who is there"));
    await eventually(
      () => fake.botMessages(BOB.id).some((m) => m.text === "Answer to who is there."),
      15_000,
      "B's answer to Bob",
    );

    agent.open();
    await eventually(() => driver?.botMessages().some((m) => m.text === "Part one. Part two."), 15_000, "the rest of A's reply");
    await stopping;
    running.splice(running.indexOf(a), 1);
    // The end of the reply went out through A, after A had stopped polling.
    const edits = fake.calls.filter((c) => c.method === "editMessageText" && c.client === "a" && c.at > signal);
    expect(edits.length).toBeGreaterThan(0);
    expect(polls(fake, "a", signal)).toEqual([]);
    expect(fetchedTwice(fake, "a")).toEqual([]);
    expect(fake.conflicts).toEqual([]);
    expect(await stateOf(b)).toBe("running");
  });

  it("a leader that loses its lease while alive stops polling at once and finishes its reply", async () => {
    const { url, fake, agent, a, b } = await streamingOnLeader();
    // Another replica holds the lease for 10 s (as when A could not renew it): A must step down.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    let freeAt: number;
    try {
      const { rows } = await db.query<{ until: string }>(
        `UPDATE antler_channel_leases SET replica = 'replica-x', expires_at = now() + interval '10 seconds'
         WHERE channel = 'telegram' RETURNING extract(epoch FROM expires_at) * 1000 AS until`,
      );
      freeAt = Number(rows[0]?.until);
    } finally {
      await db.end();
    }
    await eventually(async () => (await stateOf(a)) === "standby", 10_000, "A steps down");
    const lost = Date.now();
    expect(driver!.botMessages().some((m) => m.text === "Part one. Part two.")).toBe(false);

    // The reply ends through A's send path while no replica may poll the bot.
    agent.open();
    await eventually(() => driver?.botMessages().some((m) => m.text === "Part one. Part two."), 15_000, "the rest of A's reply");
    const edits = fake.calls.filter((c) => c.method === "editMessageText" && c.client === "a" && c.at > lost);
    expect(edits.length).toBeGreaterThan(0);
    expect(polls(fake, "a", lost).filter((c) => c.at < freeAt - 50)).toEqual([]);
    expect(polls(fake, "b", lost).filter((c) => c.at < freeAt - 50)).toEqual([]);

    // Once the lease is free, whichever replica wins it polls (A through a fresh instance) and answers.
    await eventually(() => [...polls(fake, "a", lost), ...polls(fake, "b", lost)][0], 20_000, "a poll once the lease is free");
    await driver!.deliver(fake.dm(BOB, "still there"));
    await eventually(() => fake.botMessages(BOB.id).some((m) => m.text === "Answer to still there."), 15_000, "an answer");
    expect([await stateOf(a), await stateOf(b)].sort()).toEqual(["running", "standby"]);
    expect(fake.conflicts).toEqual([]);
  });
});
