/**
 * Probe `handover`: several built gateway replicas on one PostgreSQL database, Telegram polling
 * (each replica through an API root of its own, so the fake names the replica of every call).
 * The leader is sent SIGTERM while N replies stream. Checks:
 *
 * - another replica's first getUpdates comes within 1.5 s of the signal (measured at the fake);
 * - the stopping replica calls getUpdates no more after the signal, and was handed no update twice
 *   (no fetch-and-refuse loop while it drains);
 * - the streaming replies end as replies (through the stopping replica), every message of the
 *   second wave (sent right after the signal) is answered, in order, once; no 409 conflict.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import pg from "pg";
import { type Replica, ReplicaCluster } from "../../cluster/replicas.js";
import { startClusterModel, TelegramUsers } from "../../cluster/replicas-world.js";
import type { CallRecord } from "../../fakes/telegram/index.js";
import { FakeTelegram } from "../../fakes/telegram/index.js";
import type { ProbeContext, ProbeResult } from "../harness.js";
import { seconds, until } from "../util.js";

/** The acceptance: signal → another replica's first getUpdates. */
const HANDOVER_LIMIT_MS = 1_500;
const ADMIN_URL = process.env.ANTLER_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export async function handoverProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const n = ctx.size(10, 30);
  const db = await probeDatabase();
  ctx.defer(() => db.drop());
  const fake = await FakeTelegram.start();
  ctx.defer(() => fake.close());
  const model = await startClusterModel();
  ctx.defer(() => model.close());
  const cluster = await ReplicaCluster.start({
    replicas: 3,
    databaseUrl: db.url,
    modelUrl: model.url,
    poolSize: 3,
    // Long enough for every streaming reply to end on a loaded machine; the handover does not wait for it.
    gateway: { drain_ms: 20_000 },
    keepLogs: true, // removed below unless the probe failed
    channels: async (r) => ({
      telegram: {
        enabled: true,
        mode: "polling",
        bot_token: fake.token,
        api_base: await fake.listenFor(r.name),
        edit_interval_ms: 300,
      },
    }),
  });
  ctx.gateways.push(...cluster.members.map((r) => r.process));
  let keep = ctx.settings.keepLogs;
  ctx.defer(() => keep || rmSync(cluster.dir, { recursive: true, force: true }));
  ctx.defer(() => cluster.close());
  await cluster.waitReady(["telegram"]);
  const leader = await cluster.waitLeader("telegram", 20_000);

  const users = new TelegramUsers(fake);
  const ns = Array.from({ length: n }, (_, i) => i + 1);
  for (const i of ns) users.send(i, `h${i}-1`, "long");
  const streaming = await until(() => users.streaming(ns).length >= Math.ceil(n / 2), 30_000, 20);
  const failures: string[] = [];
  if (!streaming) failures.push("the replies never streamed before the signal");

  const signal = Date.now();
  const exiting = leader.process.kill("SIGTERM", 40_000);
  // The second wave comes at once: the stopping replica must not fetch it only to refuse it.
  for (const i of ns) users.send(i, `h${i}-2`, "short");
  const first = await firstPollElsewhere(fake, leader, signal, 15_000);
  const handoverMs = first ? first.at - signal : Number.NaN;
  if (!first) failures.push("no other replica polled within 15 s of the signal");
  else if (handoverMs > HANDOVER_LIMIT_MS) failures.push(`the next replica polled ${handoverMs} ms after the signal`);
  const exit = await exiting;
  const settled = await until(() => users.allAnswered(true), ctx.size(40_000, 60_000), 100);
  if (!settled) failures.push("not every message was answered by the deadline");

  const after = polls(fake, leader.name, signal);
  if (after.length > 0) failures.push(`the stopping replica called getUpdates ${after.length} time(s) after the signal`);
  const twice = fetchedTwice(fake, leader.name);
  if (twice.length > 0) failures.push(`the stopping replica was handed ${twice.length} update(s) more than once`);
  if (fake.conflicts.length > 0) failures.push(`${fake.conflicts.length} getUpdates conflict(s) (two pollers at once)`);
  failures.push(...users.outOfOrder().slice(0, 5));
  const lastWrite = Math.max(
    ...fake.calls.filter((c) => c.client === leader.name && /^(send|edit)Message/.test(c.method)).map((c) => c.at),
  );
  const finishedByLeader = ns.filter((i) => users.writers(String(users.user(i).id), signal).includes(leader.name)).length;
  const notes = [
    `handover (signal → ${first?.client ?? "none"}'s first getUpdates): ${Number.isFinite(handoverMs) ? `${handoverMs} ms` : "-"}`,
    `stop took ${seconds((exit?.at ?? Date.now()) - signal)}, exit code ${exit?.code ?? exit?.signal ?? "?"}`,
    `getUpdates after the signal: ${[...users.polls(signal)].map(([c, k]) => `${c} ${k}`).join(", ") || "none"}`,
    `chats the stopping replica still wrote in after the signal: ${finishedByLeader} of ${n}, the last ${seconds(lastWrite - signal)} after it`,
  ];
  const result = ctx.result(users.evaluate(), notes, failures, true);
  keep ||= result.failures.length > 0 || result.lost > 0 || result.duplicates > 0 || result.crashes > 0;
  if (keep) result.notes.push(`replica logs: ${cluster.describe()}`);
  return result;
}

/** The first getUpdates since `since` by a replica other than `leader`, waited for up to `timeoutMs`. */
async function firstPollElsewhere(
  fake: FakeTelegram,
  leader: Replica,
  since: number,
  timeoutMs: number,
): Promise<CallRecord | undefined> {
  const find = () => fake.calls.find((c) => c.method === "getUpdates" && c.client !== leader.name && c.at >= since);
  await until(() => find() !== undefined, timeoutMs, 10);
  return find();
}

function polls(fake: FakeTelegram, client: string, since = 0): CallRecord[] {
  return fake.calls.filter((c) => c.method === "getUpdates" && c.client === client && c.at >= since);
}

/** Update ids handed to `client` by more than one of its getUpdates calls. */
function fetchedTwice(fake: FakeTelegram, client: string): number[] {
  const ids = polls(fake, client).flatMap((c) => c.handed ?? []);
  return [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))];
}

/**
 * A database of the probe's own beside ANTLER_TEST_PG_URL's (default postgres@127.0.0.1/test),
 * named like the test runs' so their sweep drops one a killed run left behind.
 */
async function probeDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `antler_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
