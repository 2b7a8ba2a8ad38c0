/**
 * Replicas in one test process: each test file gets a database of its own on the machine's
 * PostgreSQL (dropped after the file), and each `Cluster` its own pool, as separate processes
 * would have. `kill` stops a replica the way SIGKILL would: its loops end, nothing is released.
 */
import { randomBytes } from "node:crypto";
import net from "node:net";
import pg from "pg";
import { afterAll, afterEach, beforeAll } from "vitest";
import { Cluster, type ClusterOptions } from "../../src/cluster/index.js";
import { openPool } from "../../src/storage/postgres.js";

const ADMIN_URL = process.env.ANTLER_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Short timings: a dead leader's channel moves within 1.5 s + 0.3 s. */
export const FAST: ClusterOptions = {
  heartbeatMs: 300,
  leaderTtlMs: 1_500,
  conversationTtlMs: 1_500,
  deadAfterMs: 1_500,
  pollMs: 50,
};

interface Replica {
  cluster: Cluster;
  pool: pg.Pool;
}

/** Sets up the file's database and closes every replica after each test; returns the database URL getter. */
export function useClusterDatabase(): { url: () => string } {
  let url = "";
  const name = `antler_cluster_${randomBytes(5).toString("hex")}`;
  beforeAll(async () => {
    await admin(`CREATE DATABASE ${name}`);
    const parsed = new URL(ADMIN_URL);
    parsed.pathname = `/${name}`;
    url = parsed.toString();
  });
  afterEach(async () => {
    await Promise.all(replicas.splice(0).map(endReplica));
  });
  afterAll(async () => {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
  return { url: () => url };
}

const replicas: Replica[] = [];

/** Opens a replica on a pool of its own. */
export async function openReplica(url: string, options: ClusterOptions = FAST, poolUrl = url): Promise<Cluster> {
  const pool = openPool({ url: poolUrl, poolSize: 3 });
  const cluster = await Cluster.open(pool, options);
  replicas.push({ cluster, pool });
  return cluster;
}

/** What SIGKILL leaves: every loop stops, no row or lease is released, the connections close. */
export async function kill(cluster: Cluster): Promise<void> {
  await cluster.halt();
  const replica = replicas.find((r) => r.cluster === cluster);
  if (replica) await replica.pool.end();
}

async function endReplica({ cluster, pool }: Replica): Promise<void> {
  await cluster.close().catch(() => undefined);
  await pool.end().catch(() => undefined);
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Polls `check` until it returns a value other than undefined/false; fails after `ms`. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  ms = 15_000,
  what = "the condition",
): Promise<Exclude<T, false | undefined>> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as Exclude<T, false | undefined>;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A TCP proxy in front of PostgreSQL that can go silent: after `blackhole()` no byte passes
 * either way and no socket closes, as when a network partition cuts a replica off.
 */
export class PartitionProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private silent = false;

  private constructor(target: URL) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.sockets.add(from);
        from.on("data", (chunk) => {
          if (!this.silent) to.write(chunk);
        });
        from.on("error", () => to.destroy());
        from.on("close", () => {
          this.sockets.delete(from);
          to.destroy();
        });
      }
    });
  }

  static async start(url: string): Promise<{ proxy: PartitionProxy; url: string }> {
    const target = new URL(url);
    const proxy = new PartitionProxy(target);
    await new Promise<void>((resolve) => proxy.server.listen(0, "127.0.0.1", resolve));
    const through = new URL(url);
    through.host = `127.0.0.1:${(proxy.server.address() as net.AddressInfo).port}`;
    return { proxy, url: through.toString() };
  }

  blackhole(): void {
    this.silent = true;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
