/**
 * The world of the outbox cluster tests (issue 31): built replicas on one PostgreSQL database,
 * the Telegram fake (polling: only the channel's leader runs it and delivers), the mock model
 * with its default reply ("ok: <last user text>"), and an API client that does what a real one
 * does: it sends each request with its `Idempotency-Key` and, when a replica cannot be reached,
 * tries the next one.
 */
import pg from "pg";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { FakeTelegram } from "../fakes/telegram/index.js";
import { ADMIN_TOKEN } from "../reliability/gateway-process.js";
import { sleep, until } from "../reliability/util.js";
import { type Replica, ReplicaCluster } from "./replicas.js";
import { type ClusterDatabase, clusterDatabase } from "./replicas-db.js";

export const log = (...parts: unknown[]) => console.log("[outbox]", ...parts);

/** `storage.pool_size` per replica: PostgreSQL's 100 connections are shared with other test runs. */
const POOL_SIZE = Number(process.env.ANTLER_CLUSTER_POOL_SIZE ?? 5);

export interface OutboxWorld {
  db: ClusterDatabase;
  model: MockModel;
  telegram: FakeTelegram;
  cluster: ReplicaCluster;
  close(): Promise<void>;
}

/**
 * Starts `replicas` replicas running Telegram (polling) with `sections` (`outbox:`, `schedules:`)
 * and waits until they are ready. `chats`: private chats of users who wrote to the bot before.
 */
export async function startOutboxWorld(options: {
  replicas: number;
  sections: Record<string, unknown>;
  chats: number[];
}): Promise<OutboxWorld> {
  const opened: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const c of opened.reverse()) await c().catch(() => undefined);
  };
  try {
    const db = await clusterDatabase();
    opened.push(() => db.drop());
    const model = await startMockModel();
    opened.push(() => model.close());
    const telegram = await FakeTelegram.start();
    opened.push(() => telegram.close());
    for (const id of options.chats) telegram.addChat({ id, type: "private" });
    const cluster = await ReplicaCluster.start({
      replicas: options.replicas,
      databaseUrl: db.url,
      modelUrl: model.url,
      poolSize: POOL_SIZE,
      keepLogs: process.env.ANTLER_KEEP_LOGS === "1",
      sections: options.sections,
      channels: async (r) => ({
        telegram: {
          enabled: true,
          mode: "polling",
          bot_token: telegram.token,
          api_base: await telegram.listenFor(r.name),
          edit_interval_ms: 300,
        },
      }),
    });
    opened.push(() => cluster.close());
    await cluster.waitReady(["telegram"], 90_000);
    return { db, model, telegram, cluster, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** One HTTP try: its status, or `unreachable` when the replica did not answer (dead, or the connection broke). */
export interface Try {
  replica: string;
  status: number | "unreachable";
  replayed: boolean;
  body: Record<string, unknown>;
}

/** One request to one replica, with the admin token. */
export async function call(r: Replica, method: string, path: string, body?: unknown, key?: string): Promise<Try> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (key !== undefined) headers["idempotency-key"] = key;
  try {
    const res = await fetch(`${r.url}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    return {
      replica: r.name,
      status: res.status,
      replayed: res.headers.get("idempotent-replayed") === "true",
      body: text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : {},
    };
  } catch {
    return { replica: r.name, status: "unreachable", replayed: false, body: {} };
  }
}

/**
 * A client's send of one request: to the `start`-th replica of `members`, and on to the next one
 * whenever a replica cannot be reached (as a client with a list of gateway URLs would). Returns
 * every try, the answered one last.
 */
export async function sendWithFailover(
  members: Replica[],
  start: number,
  path: string,
  body: unknown,
  key: string,
): Promise<Try[]> {
  const tries: Try[] = [];
  for (let i = 0; i < members.length * 4; i++) {
    const r = members[(start + i) % members.length] as Replica;
    const t = await call(r, "POST", path, body, key);
    tries.push(t);
    if (t.status !== "unreachable") return tries;
    await sleep(50);
  }
  return tries;
}

/** A GET from the first live replica that answers it with 200. */
export async function getFromAny<T>(members: Replica[], path: string): Promise<T | undefined> {
  for (const r of members.filter((m) => m.alive)) {
    const t = await call(r, "GET", path);
    if (t.status === 200) return t.body as T;
  }
  return undefined;
}

/** The operator's view of a schedule (`GET /api/schedules/:id`), the keys these tests read. */
export interface ScheduleView {
  id: string;
  tenant: string;
  state: string;
  fires: number;
  missed: number;
  skipped: number;
  last_fire_at: string | null;
  last_delivery?: { state: string; error?: string };
}

/**
 * The outbox rows of one source of `tenant`, straight from the database (row-level security shows
 * a connection one tenant's rows): the due time of a schedule's fire is in its idempotency key.
 */
export async function outboxRows(
  db: ClusterDatabase,
  tenant: string,
  source: string,
): Promise<Array<{ key: string; state: string; owner: string | null; attempts: number }>> {
  const client = new pg.Client({ connectionString: db.url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query("SELECT set_config('antler.tenant', $1, false)", [tenant]);
    const { rows } = await client.query<{ key: string; state: string; owner: string | null; attempts: number }>(
      "SELECT idempotency_key AS key, state, owner, attempts FROM antler_outbox WHERE source = $1 ORDER BY seq",
      [source],
    );
    return rows;
  } finally {
    await client.end();
  }
}

/** Waits until `count()` reaches `atLeast`, then until it stays the same for `quietMs` (a late duplicate still shows). */
export async function settleCount(count: () => number, atLeast: number, timeoutMs: number, quietMs = 2_000): Promise<number> {
  const started = Date.now();
  await until(() => count() >= atLeast, timeoutMs, 100);
  const took = Date.now() - started;
  let last = -1;
  await until(
    () => {
      const now = count();
      const quiet = now === last;
      last = now;
      return quiet;
    },
    quietMs * 5,
    quietMs,
  );
  return took;
}
