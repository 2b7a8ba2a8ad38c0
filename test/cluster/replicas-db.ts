/**
 * A PostgreSQL database for one cluster of gateway replicas, so a scenario never meets the
 * leases, heartbeats and checkpoints of the one before. It is created beside the test run's
 * database (test/helpers/postgres-global.ts) and owned by the run's role, with a name of the
 * same form, so a run killed before its cleanup leaves nothing the next run's sweep misses.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { postgresUrl } from "../helpers/postgres.js";

/** The server's admin URL (also the owner of a database made outside a vitest run, e.g. by a reliability probe). */
export const ADMIN_URL = process.env.ANTLER_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface ClusterDatabase {
  /** `storage.url` for every replica of the cluster. */
  url: string;
  /** Connections open now: to this database, and to the whole server (which has a limit). */
  connections(): Promise<{ ours: number; all: number }>;
  drop(): Promise<void>;
}

/** `ownerUrl`: a URL whose role will own the database (default: the vitest run's database). */
export async function clusterDatabase(ownerUrl?: string): Promise<ClusterDatabase> {
  const runUrl = new URL(ownerUrl ?? postgresUrl());
  const role = decodeURIComponent(runUrl.username);
  const name = `antler_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  await admin(`CREATE DATABASE ${name} OWNER ${role}`);
  const url = new URL(runUrl.toString());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    connections: async () => {
      const [row] = await admin<{ ours: number; all: number }>(
        "SELECT count(*) FILTER (WHERE datname = $1)::int AS ours, count(*)::int AS all FROM pg_stat_activity WHERE backend_type = 'client backend'",
        [name],
      );
      return row ?? { ours: 0, all: 0 };
    },
    drop: async () => {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

async function admin<T extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** Samples the connections while a scenario runs; `stop()` gives the peaks. */
export function watchConnections(db: ClusterDatabase, everyMs = 500): { stop(): { ours: number; all: number } } {
  const peak = { ours: 0, all: 0 };
  const timer = setInterval(() => {
    db.connections()
      .then((now) => {
        peak.ours = Math.max(peak.ours, now.ours);
        peak.all = Math.max(peak.all, now.all);
      })
      .catch(() => undefined);
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return { ...peak };
    },
  };
}
