/**
 * Issue 22's acceptance: several built gateway processes on one PostgreSQL database, against
 * the Telegram fake (polling: one poller per bot) and the Slack fake (HTTP Events API spread
 * over the replicas, retries sent to another replica). See README.md beside this file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockModel } from "../fakes/openai.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { FakeTelegram } from "../fakes/telegram/index.js";
import { until } from "../reliability/util.js";
import { type Replica, ReplicaCluster, telegramAndSlack } from "./replicas.js";
import { ensureBuilt } from "./replicas-build.js";
import { type ClusterDatabase, clusterDatabase, watchConnections } from "./replicas-db.js";
import { answeredReply, SlackUsers, settle, startClusterModel, TelegramUsers } from "./replicas-world.js";

/** The numbers: 3 replicas, 300 messages over 100 conversations. */
const REPLICAS = 3;
const CONVERSATIONS = 100;
const PER_CONVERSATION = 3;
/** Failover: users whose long reply is streaming when the leader dies. */
const FAILOVER_USERS = 20;
const TAKEOVER_LIMIT_MS = 10_000;
/** Slack users whose long reply is streaming when a replica dies. */
const SLACK_KILL_USERS = 30;
/** `storage.pool_size` per replica: PostgreSQL's 100 connections are shared with other test runs. */
const POOL_SIZE = Number(process.env.ANTLER_CLUSTER_POOL_SIZE ?? 5);

/** Figures each test prints (vitest shows console output), for the report. */
const log = (...parts: unknown[]) => console.log("[replicas]", ...parts);

beforeAll(async () => {
  log(await ensureBuilt());
}, 240_000);

async function startWorld(db: ClusterDatabase, model: MockModel) {
  const telegram = await FakeTelegram.start();
  const slack = await FakeSlack.start({
    mode: "webhook",
    companionMessages: false,
    // Slack waits 1 and 5 minutes before the 2nd and 3rd retries; a test cannot.
    http: { spread: "round-robin", retryDelaysMs: [0, 500, 1_000] },
  });
  const cluster = await ReplicaCluster.start({
    replicas: REPLICAS,
    databaseUrl: db.url,
    modelUrl: model.url,
    poolSize: POOL_SIZE,
    keepLogs: process.env.ANTLER_KEEP_LOGS === "1",
    channels: telegramAndSlack(telegram, slack),
  });
  slack.eventsUrls = cluster.members.map((r) => `${r.url}/webhooks/slack`);
  return { telegram, slack, cluster };
}

type World = Awaited<ReturnType<typeof startWorld>>;

async function closeWorld(world: World | undefined): Promise<void> {
  await world?.cluster.close();
  await world?.telegram.close();
  await world?.slack.close();
}

/**
 * A fresh cluster for one describe block: its own database, mock model, fakes and 3 replicas,
 * all ready before the first test; closed after the last, with the peak connection count logged.
 */
function useWorld(): () => World & { model: MockModel } {
  let db: ClusterDatabase | undefined;
  let model: MockModel | undefined;
  let world: World | undefined;
  let watch: ReturnType<typeof watchConnections> | undefined;
  beforeAll(async () => {
    db = await clusterDatabase();
    watch = watchConnections(db);
    model = await startClusterModel();
    world = await startWorld(db, model);
    await world.cluster.waitReady(["telegram", "slack"]);
  }, 90_000);
  afterAll(async () => {
    log("peak PostgreSQL connections (this cluster's database / the whole server):", watch?.stop());
    await closeWorld(world);
    await model?.close();
    await db?.drop();
  }, 30_000);
  return () => {
    if (!world || !model) throw new Error("the cluster did not start");
    return { ...world, model };
  };
}

describe("three replicas on PostgreSQL: load and questions", () => {
  const world = useWorld();

  it("Telegram polling: every message answered once and in order; only the leader polls, no 409", async () => {
    const { telegram, cluster } = world();
    const leader = await cluster.waitLeader("telegram", 15_000);
    const users = new TelegramUsers(telegram);
    for (let k = 1; k <= PER_CONVERSATION; k++) {
      for (let n = 1; n <= CONVERSATIONS; n++) users.send(n, `t${n}-${k}`, "short");
    }
    const took = await settle([users], 120_000);
    const o = users.evaluate();
    const polls = users.polls();
    const senders = new Map(cluster.members.map((r) => [r.name, 0]));
    for (const c of telegram.calls) if (c.method === "sendMessage") senders.set(c.client, (senders.get(c.client) ?? 0) + 1);
    log("telegram load:", { messages: o.messages, answeredOnce: o.answeredOnce, lost: o.lost, duplicates: o.duplicates, took });
    log("telegram getUpdates per replica:", Object.fromEntries(polls), "sendMessage per replica:", Object.fromEntries(senders));
    expect(o, cluster.evidence().join("\n")).toMatchObject({
      messages: 300,
      answeredOnce: 300,
      lost: 0,
      duplicates: 0,
      byNotice: 0,
    });
    expect(users.outOfOrder()).toEqual([]);
    expect(telegram.conflicts).toEqual([]);
    expect([...polls.keys()]).toEqual([leader.name]);
    expect(cluster.crashes).toBe(0);
    // Every replica reports the same leader; the others stand by.
    const listed = (await leader.replicas()) ?? [];
    const leaderId = listed.find((e) => e.pid === leader.pid)?.id;
    expect(listed.map((e) => e.pid).sort()).toEqual(cluster.members.map((r) => r.pid).sort());
    expect(listed.find((e) => e.id === leaderId)?.leads).toContain("telegram");
    for (const r of cluster.members) {
      const report = (await r.channels())?.find((c) => c.name === "telegram");
      expect(report).toMatchObject({ leader: leaderId, state: r === leader ? "running" : "standby" });
    }
  }, 150_000);

  it("Slack HTTP: deliveries spread over the replicas, retries go to another one; every message answered once, in order", async () => {
    const { slack, cluster } = world();
    const users = new SlackUsers(slack);
    const triesBefore = slack.deliveries.length;
    // Some first tries reach a replica whose answer Slack misses (it has the event, Slack retries),
    // some never reach one; seeded, so a failing run can be replayed.
    slack.injectDeliveryFault({ kind: "timeout", probability: 0.1, seed: 3 });
    slack.injectDeliveryFault({ kind: "connection_failed", probability: 0.05, seed: 5 });
    // A conversation's messages are written one after another; conversations run side by side.
    await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, i) => {
        for (let k = 1; k <= PER_CONVERSATION; k++) await users.send(i + 1, `s${i + 1}-${k}`, "short");
      }),
    );
    const took = await settle([users], 120_000);
    const o = users.evaluate();
    const tries = slack.deliveries.slice(triesBefore);
    const firstTries = tries.filter((t) => t.retryNum === 0);
    const retries = tries.filter((t) => (t.retryNum ?? 0) > 0);
    const perUrl = new Map<string, number>();
    for (const t of firstTries) perUrl.set(t.url ?? "?", (perUrl.get(t.url ?? "?") ?? 0) + 1);
    const sameUrl = retries.filter((r) => {
      const before = tries.filter((t) => t.eventId === r.eventId && t.retryNum === (r.retryNum ?? 0) - 1);
      return before.some((b) => b.url === r.url);
    });
    log("slack load:", { messages: o.messages, answeredOnce: o.answeredOnce, lost: o.lost, duplicates: o.duplicates, took });
    log(
      "slack first tries per URL:",
      Object.fromEntries(perUrl),
      "retries:",
      retries.length,
      "failed tries:",
      tries.length - tries.filter((t) => t.ok).length,
    );
    expect(o, cluster.evidence().join("\n")).toMatchObject({
      messages: 300,
      answeredOnce: 300,
      lost: 0,
      duplicates: 0,
      byNotice: 0,
    });
    expect(users.outOfOrder()).toEqual([]);
    // Slack gives an event up after its third retry. One whose last try timed out on a loaded
    // machine had still been recorded (every message is answered once, above): listed, not failed.
    const lastTriesFailed = tries.filter((t) => !t.ok && t.retryNum === 3);
    if (lastTriesFailed.length > 0) log("slack events whose last try failed (answered all the same):", lastTriesFailed);
    expect(perUrl.size).toBe(REPLICAS);
    for (const n of perUrl.values()) expect(n).toBeGreaterThan(firstTries.length / (REPLICAS * 2));
    expect(retries.length).toBeGreaterThan(10);
    expect(sameUrl).toEqual([]);
    expect(cluster.crashes).toBe(0);
  }, 150_000);

  it("Slack HTTP: a question asked on one replica and answered (button click) on another resumes once", async () => {
    const { slack, cluster } = world();
    const users = new SlackUsers(slack);
    const urls = [...slack.eventsUrls];
    const asked: Array<{ n: number; id: string; asker: Replica; answerer: Replica }> = [];
    try {
      for (let i = 0; i < REPLICAS; i++) {
        const asker = cluster.members[i] as Replica;
        const answerer = cluster.members[(i + 1) % REPLICAS] as Replica;
        const n = 500 + i;
        const id = `q${n}`;
        slack.eventsUrls = [urls[i] as string];
        await users.send(n, id, "ask", `Blue ${id}`);
        asked.push({ n, id, asker, answerer });
      }
      for (const q of asked) {
        const chat = users.chat(q.n);
        const question = await until(() => slack.botMessages(chat).some((m) => m.buttons.includes(`Blue ${q.id}`)), 30_000, 100);
        expect(question, `the question of ${q.id}`).toBe(true);
        expect(users.writers(chat)).toEqual([q.asker.name]);
      }
      const clickedAt = Date.now();
      for (const q of asked) {
        slack.eventsUrls = [urls[q.answerer.spec.index] as string];
        const r = await slack.click(`Blue ${q.id}`, { user: users.userId(q.n) });
        expect(r).toMatchObject({ ok: true, url: urls[q.answerer.spec.index] });
      }
      await settle([users], 30_000);
      const o = users.evaluate();
      log("questions:", { asked: asked.length, answeredOnce: o.answeredOnce, lost: o.lost, duplicates: o.duplicates });
      expect(o, cluster.evidence().join("\n")).toMatchObject({
        messages: REPLICAS,
        answeredOnce: REPLICAS,
        lost: 0,
        duplicates: 0,
      });
      for (const q of asked) {
        const chat = users.chat(q.n);
        expect(slack.botMessages(chat).map((m) => m.text)).toContain(answeredReply(q.id, `Blue ${q.id}`));
        // One replica wrote the resumed reply: usually the one the click reached, or the asker when
        // it still held the conversation's lease then (a conversation runs where its lease is).
        expect(users.writers(chat, clickedAt)).toHaveLength(1);
        expect([q.answerer.name, q.asker.name]).toContain(users.writers(chat, clickedAt)[0]);
      }
      // The model saw each question answered once: one resumed request per question.
      const resumed = world().model.requests.filter((r) => r.messages.at(-1)?.role === "tool");
      expect(resumed.length).toBe(REPLICAS);
    } finally {
      slack.eventsUrls = urls;
    }
  }, 90_000);
});

describe("three replicas on PostgreSQL: a Slack (HTTP) replica dies mid-stream", () => {
  const world = useWorld();

  it("its in-flight messages get a reply or a notice once, in order; events sent to it are retried at another replica", async () => {
    const { slack, cluster } = world();
    const users = new SlackUsers(slack);
    const ns = Array.from({ length: SLACK_KILL_USERS }, (_, i) => 300 + i);
    await Promise.all(ns.map((n) => users.send(n, `k${n}-1`, "long")));
    const streaming = () => ns.filter((n) => users.view(users.chat(n)).some((b) => b.text.trim() !== ""));
    expect(await until(() => streaming().length >= SLACK_KILL_USERS / 2, 30_000, 50), "replies streaming").toBe(true);
    // The replica that is writing in the most chats dies.
    const busiest = (r: Replica) => ns.filter((n) => users.writers(users.chat(n)).includes(r.name)).length;
    const victim = [...cluster.members].sort((a, b) => busiest(b) - busiest(a))[0] as Replica;
    const inFlight = busiest(victim);
    const deadUrl = `${victim.url}/webhooks/slack`;
    const killedAt = Date.now();
    await victim.process.kill("SIGKILL");
    const triesBefore = slack.deliveries.length;
    await Promise.all(ns.map((n) => users.send(n, `k${n}-2`, "short")));
    const took = await settle([users], 60_000, true);
    const o = users.evaluate();
    const tries = slack.deliveries.slice(triesBefore);
    const refused = tries.filter((t) => t.url === deadUrl);
    const rescued = tries.filter((t) => t.retryReason === "connection_failed" && t.ok);
    log("slack replica killed:", {
      victim: victim.name,
      inFlight,
      messages: o.messages,
      answeredOnce: o.answeredOnce,
      byNotice: o.byNotice,
      lost: o.lost,
      duplicates: o.duplicates,
      stalePartials: o.stalePartials,
      notices: Object.fromEntries(o.notices),
      triesAtDeadUrl: refused.length,
      retriedElsewhere: rescued.length,
      sinceKillMs: Date.now() - killedAt,
      took,
    });
    expect(inFlight).toBeGreaterThan(0);
    expect(o, cluster.evidence().join("\n")).toMatchObject({ messages: SLACK_KILL_USERS * 2, lost: 0, duplicates: 0 });
    expect(o.answeredOnce).toBe(o.messages);
    expect(o.extraNotices).toBe(0);
    expect(o.partialsBesideReply).toBe(0);
    expect(users.outOfOrder()).toEqual([]);
    // Every try at the dead replica failed, and its event then got through at a live one.
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((t) => !t.ok && t.failure === "connection_failed")).toBe(true);
    expect(rescued.length).toBe(refused.length);
    expect(rescued.every((t) => t.url !== deadUrl)).toBe(true);
  }, 120_000);
});

describe("three replicas on PostgreSQL: the Telegram leader dies mid-stream", () => {
  const world = useWorld();

  it("another replica polls within 10 s; nothing lost or answered twice; in-flight messages answered or told, once", async () => {
    const { telegram, cluster } = world();
    const users = new TelegramUsers(telegram);
    const ns = Array.from({ length: FAILOVER_USERS }, (_, i) => i + 1);
    const leader = await cluster.waitLeader("telegram", 15_000);
    for (const n of ns) users.send(n, `f${n}-1`, "long");
    for (const n of ns) users.send(n, `f${n}-2`, "short");
    const midStream = await until(() => users.streaming(ns).length >= FAILOVER_USERS / 2, 30_000, 50);
    expect(midStream, "replies streaming before the kill").toBe(true);
    const inFlight = users.streaming(ns);
    const killedAt = Date.now();
    await leader.process.kill("SIGKILL");
    // Updates that come while nobody polls must reach the new leader.
    for (const n of ns) users.send(n, `f${n}-3`, "short");
    const firstPoll = () => telegram.calls.find((c) => c.method === "getUpdates" && c.client !== leader.name && c.at >= killedAt);
    await until(() => firstPoll() !== undefined, 30_000, 50);
    const takeoverMs = (firstPoll()?.at ?? Number.POSITIVE_INFINITY) - killedAt;
    const next = await cluster.waitLeader("telegram", 15_000, leader);
    const took = await settle([users], 90_000, true);
    const o = users.evaluate();
    log("failover:", {
      takeoverMs,
      newLeader: next.name,
      inFlight: inFlight.length,
      messages: o.messages,
      answeredOnce: o.answeredOnce,
      byNotice: o.byNotice,
      lost: o.lost,
      duplicates: o.duplicates,
      partialsBesideReply: o.partialsBesideReply,
      stalePartials: o.stalePartials,
      notices: Object.fromEntries(o.notices),
      took,
    });
    expect(takeoverMs).toBeLessThan(TAKEOVER_LIMIT_MS);
    expect(firstPoll()?.client).toBe(next.name);
    expect(o, cluster.evidence().join("\n")).toMatchObject({ messages: FAILOVER_USERS * 3, lost: 0, duplicates: 0 });
    // Each message has its reply or one notice; no chat shows a notice beside all its replies.
    expect(o.answeredOnce).toBe(o.messages);
    expect(o.extraNotices).toBe(0);
    expect(o.partialsBesideReply).toBe(0);
    expect(users.outOfOrder()).toEqual([]);
    // Every update reached a poller; each was confirmed (none is waiting).
    expect(telegram.updates.pendingCount).toBe(0);
    expect(telegram.conflicts).toEqual([]);
    const after = users.polls(killedAt + 1);
    expect([...after.keys()].filter((c) => c !== leader.name)).toEqual([next.name]);
    const others = cluster.members.filter((r) => r !== leader);
    expect(others.every((r) => r.alive)).toBe(true);
    const listed = await next.replicas();
    expect(listed?.map((e) => e.pid).sort()).toEqual(others.map((r) => r.pid).sort());
    expect(listed?.find((e) => e.pid === next.pid)?.leads).toContain("telegram");
  }, 150_000);

  it("Telegram: a question asked on the leader is answered after a clean stop (SIGTERM) handed polling to another replica", async () => {
    const { telegram, cluster } = world();
    const users = new TelegramUsers(telegram);
    const n = 900;
    const id = `q${n}`;
    const chat = String(users.user(n).id);
    const asker = await cluster.waitLeader("telegram", 15_000);
    users.send(n, id, "ask", `Blue ${id}`);
    const asked = await until(
      () => telegram.botMessages(Number(chat)).some((m) => m.keyboard.flat().some((b) => b.text === `Blue ${id}`)),
      30_000,
      100,
    );
    expect(asked, "the question").toBe(true);
    expect(users.writers(chat)).toEqual([asker.name]);
    const stoppedAt = Date.now();
    const exit = await asker.process.kill("SIGTERM", 15_000);
    expect(exit).toMatchObject({ code: 0, asked: "SIGTERM" });
    const answerer = await cluster.waitLeader("telegram", 15_000, asker);
    const handoverMs = Date.now() - stoppedAt;
    const clickedAt = Date.now();
    telegram.click(Number(chat), users.user(n), `Blue ${id}`);
    await settle([users], 30_000);
    const o = users.evaluate();
    log("question across a clean stop:", {
      asker: asker.name,
      answerer: answerer.name,
      handoverMs,
      answeredOnce: o.answeredOnce,
      lost: o.lost,
      duplicates: o.duplicates,
      chat: users.view(chat).map((m) => m.text),
    });
    expect(o, cluster.evidence().join("\n")).toMatchObject({ messages: 1, answeredOnce: 1, byNotice: 0, lost: 0, duplicates: 0 });
    expect(users.writers(chat, clickedAt)).toEqual([answerer.name]);
    expect(cluster.crashes).toBe(0);
  }, 90_000);
});
