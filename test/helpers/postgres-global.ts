/**
 * Vitest global setup: a database of this test run's own on the machine's PostgreSQL, owned by a
 * role of its own that is no superuser (row-level security does not apply to superusers). Tests
 * get its URL with `inject("postgres")`; teardown drops both. When PostgreSQL cannot be reached,
 * tests get the reason instead, and only those that need it fail.
 *
 * ANTLER_TEST_PG_URL names the server and an admin role (default postgres@127.0.0.1:5432/test).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { TestProject } from "vitest/node";

export interface PostgresTestContext {
  /** The run's database, as its own (non-superuser) role; empty when unreachable. */
  url: string;
  /** Why there is no database, when there is none. */
  error?: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    postgres: PostgresTestContext;
  }
}

const ADMIN_URL = process.env.ANTLER_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A run killed before its teardown leaves its database; the next run drops those this old. */
const STALE_MS = 6 * 3600_000;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The name carries its time of creation, so a later run can tell a leftover from a live run's.
  const name = `antler_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
  try {
    await admin.connect();
    await dropStale(admin);
    await admin.query(`CREATE ROLE ${name} LOGIN NOSUPERUSER NOBYPASSRLS`);
    await admin.query(`CREATE DATABASE ${name} OWNER ${name}`);
  } catch (err) {
    await admin.end().catch(() => undefined);
    const reason = `PostgreSQL at ${ADMIN_URL.replace(/:[^:@/]*@/, ":***@")} is not usable (${String(err)}): start it (pg_ctlcluster <version> main start) or set ANTLER_TEST_PG_URL`;
    project.provide("postgres", { url: "", error: reason });
    return async () => undefined;
  }
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.username = name;
  url.password = "";
  url.pathname = `/${name}`;
  project.provide("postgres", { url: url.toString() });
  return async () => {
    const drop = new pg.Client({ connectionString: ADMIN_URL });
    await drop.connect();
    try {
      await dropRun(drop, name);
    } finally {
      await drop.end();
    }
  };
}

async function dropRun(admin: pg.Client, name: string): Promise<void> {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`DROP ROLE IF EXISTS ${name}`);
}

async function dropStale(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datname ~ '^antler_test_[0-9a-z]+_[0-9a-f]+$'",
  );
  for (const { datname } of rows) {
    const created = Number.parseInt(datname.split("_")[2] ?? "", 36);
    if (Date.now() - created > STALE_MS) await dropRun(admin, datname).catch(() => undefined);
  }
}
