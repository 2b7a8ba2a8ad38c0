/**
 * A PostgreSQL database for one cluster of gateway replicas, so a scenario never meets the
 * leases, heartbeats and checkpoints of the one before. It is created beside the test run's
 * database (test/helpers/postgres-global.ts) and owned by the run's role, with a name of the
 * same form, so a run killed before its cleanup leaves nothing the next run's sweep misses.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { postgresUrl } from "../helpers/postgres.js";

const ADMIN_URL = process.env.ANTLER_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface ClusterDatabase {
  /** `storage.url` for every replica of the cluster. */
  url: string;
  drop(): Promise<void>;
}

export async function clusterDatabase(): Promise<ClusterDatabase> {
  const runUrl = new URL(postgresUrl());
  const role = decodeURIComponent(runUrl.username);
  const name = `antler_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  await admin(`CREATE DATABASE ${name} OWNER ${role}`);
  const url = new URL(runUrl.toString());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
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
