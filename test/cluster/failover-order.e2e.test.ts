/**
 * Order across a failover (issue 28): built gateway replicas on one PostgreSQL database; the
 * Telegram leader is SIGKILLed while it streams replies in Telegram and Slack DMs, and each chat
 * writes again 1 s later. The cut reply's restart notice must come before the new message's reply,
 * in every chat. The scenario is the reliability probe's (test/reliability/probes/failover-order.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failoverOrder, figures, judge, TAKEOVER_LIMIT_MS } from "../reliability/probes/failover-order.js";
import { CHANNELS, ReplicaWorld } from "../reliability/replicas.js";
import { ensureBuilt } from "./replicas-build.js";

const log = (...parts: unknown[]) => console.log("[failover-order]", ...parts);

describe("a replica killed mid-reply, and the same chats writing again 1 s later", () => {
  let world: ReplicaWorld | undefined;
  beforeAll(async () => {
    log(await ensureBuilt());
    world = await ReplicaWorld.start({ replicas: 2, keepLogs: process.env.ANTLER_KEEP_LOGS === "1" });
    await world.cluster.waitReady(CHANNELS, 90_000);
  }, 240_000);
  afterAll(async () => {
    await world?.close();
  }, 30_000);

  it("answers the cut reply (its restart notice) before the new message, in every chat", async () => {
    if (!world) throw new Error("the cluster did not start");
    const report = await failoverOrder(world, 4);
    for (const line of figures(report)) log(line);
    const evidence = world.cluster.evidence().join("\n");
    expect(report.outcome, evidence).toMatchObject({ messages: 8, lost: 0, duplicates: 0 });
    expect(report.streamingAtKill).toBe(4);
    // Each cut reply got the notice, and it came first; the new messages got their replies.
    expect(report.outcome.byNotice).toBe(4);
    expect(report.outOfOrder, evidence).toEqual([]);
    expect(report.secondWithoutReply).toEqual([]);
    for (const [i, c] of report.chats.entries()) {
      const answers = c.users.ledger.answers(c.chat, c.users.view(c.chat)).map((a) => a.id);
      expect(answers, `chat ${c.chat}`).toEqual([c.first, c.second]);
      expect(report.firstAnsweredMs[i]).toBeLessThan(TAKEOVER_LIMIT_MS);
    }
    expect(judge(report)).toEqual([]);
    expect(world.cluster.crashes).toBe(0);
  }, 150_000);
});
