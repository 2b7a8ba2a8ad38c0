/**
 * PostgreSQL for tests: the run's database (see postgres-global.ts), and a fresh schema in it
 * for each test that wants empty tables, so test files running side by side never meet.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

/** The run's database URL; fails the calling test with the reason when PostgreSQL is unusable. */
export function postgresUrl(): string {
  const { url, error } = inject("postgres");
  if (!url) throw new Error(error ?? "no PostgreSQL database was provided: is test/helpers/postgres-global.ts the globalSetup?");
  return url;
}

/** Runs one statement on the run's database as its owner. */
export async function adminQuery<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: postgresUrl() });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** A new empty schema, and a URL whose connections create and find tables there. */
export async function freshSchema(prefix = "t"): Promise<{ schema: string; url: string }> {
  const schema = `${prefix}_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE SCHEMA ${schema}`);
  const url = new URL(postgresUrl());
  url.searchParams.set("options", `-c search_path=${schema}`);
  return { schema, url: url.toString() };
}
