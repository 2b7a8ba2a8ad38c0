/**
 * The PostgreSQL database several gateway replicas share: opening pools, and schema migrations
 * that any number of replicas may run at once.
 *
 * A pool's connections carry their settings from the moment they open (PostgreSQL's startup
 * `options`): the tenant whose rows row-level security lets them see, and the schema search path
 * a `?options=-c search_path=…` in the URL gives.
 */
import pg from "pg";

export interface PostgresConnection {
  /** `postgres://user:password@host:5432/database`; its `options` parameter is kept. */
  url: string;
  /** Most connections the pool opens. */
  poolSize?: number;
}

/** The setting row-level security policies compare each row's `tenant` to. */
export const TENANT_SETTING = "antler.tenant";

/**
 * One lock for every migration of Antler's schemas, in every database: whoever holds it is the
 * only one changing a schema, and the others find the work done when they get it.
 */
export const MIGRATION_LOCK = 0x616e746c; // "antl"

/** An idle connection closes after this, so a tenant that went quiet holds none. */
const IDLE_MS = 10_000;

/** A pool on `connection`; with `tenant`, each connection is that tenant's for row-level security. */
export function openPool(connection: PostgresConnection, tenant?: string): pg.Pool {
  const settings = tenant === undefined ? [] : [`-c ${TENANT_SETTING}=${escapeOption(tenant)}`];
  const pool = new pg.Pool({
    ...withOptions(connection.url, settings),
    max: connection.poolSize ?? 10,
    idleTimeoutMillis: IDLE_MS,
  });
  // An idle connection the server ends (a restart, a failover) is an 'error' event, which would
  // end the process unheard; the pool has already dropped it, and the next query opens another.
  pool.on("error", () => undefined);
  return pool;
}

/**
 * Adds startup settings to a URL's `options` parameter. pg lets the URL's parameters override
 * the pool's own `options`, so they go into the URL, after any the user wrote there. A URL the
 * URL parser refuses (a Unix socket without a host) keeps them in the pool's `options`.
 */
function withOptions(url: string, settings: string[]): pg.PoolConfig {
  if (settings.length === 0) return { connectionString: url };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, options: settings.join(" ") };
  }
  const given = parsed.searchParams.get("options");
  parsed.searchParams.set("options", [given, ...settings].filter(Boolean).join(" "));
  return { connectionString: parsed.toString() };
}

/** Where a URL points (`host:port/database`), for messages: never its password. */
export function whereIs(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname}`;
  } catch {
    return "the database at storage.url";
  }
}

/** PostgreSQL splits startup options at spaces; a backslash keeps one (or itself) in a value. */
function escapeOption(value: string): string {
  return value.replace(/[\\\s]/g, (c) => `\\${c}`);
}

/** One migration step: SQL text, or a function given the migrating transaction's client. */
export type MigrationStep = string | ((client: pg.PoolClient) => Promise<void>);

/**
 * Brings the schema named `name` (its tables live where the pool's search path puts new ones) up
 * to `steps.length`: step N takes it from version N-1 to N. Versions are kept per name in
 * `antler_migrations`, so several kinds of tables migrate independently in one database.
 *
 * Everything runs in one transaction that first takes `pg_advisory_xact_lock(MIGRATION_LOCK)`:
 * of several replicas starting at once, one migrates while the others wait, then read the new
 * version and have nothing to do. A failed step rolls every step of this run back.
 */
export async function migrate(pool: pg.Pool, name: string, steps: readonly MigrationStep[], now = Date.now()): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS antler_migrations (
      name text NOT NULL, version integer NOT NULL, applied_at bigint NOT NULL, PRIMARY KEY (name, version))`);
    const { rows } = await client.query<{ version: number }>(
      "SELECT COALESCE(MAX(version), 0)::integer AS version FROM antler_migrations WHERE name = $1",
      [name],
    );
    const version = rows[0]?.version ?? 0;
    if (version > steps.length) {
      throw new Error(`[antler] [postgres] schema ${name} is at version ${version}; this Antler knows ${steps.length}`);
    }
    for (const [i, step] of steps.slice(version).entries()) {
      if (typeof step === "string") await client.query(step);
      else await step(client);
      await client.query("INSERT INTO antler_migrations (name, version, applied_at) VALUES ($1, $2, $3)", [
        name,
        version + i + 1,
        now,
      ]);
    }
    await client.query("COMMIT");
    return steps.length;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Runs `work` while this process holds the migration lock, for set-up code that opens its own
 * connections (so it cannot run inside `migrate`'s transaction). `work` must not need more than
 * `pool`'s size minus one connections: the lock holds one.
 */
export async function withMigrationLock<T>(pool: pg.Pool, work: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      return await work();
    } finally {
      // A connection that could not let go of the lock must not go back to the pool holding it.
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch((err: Error) => {
        broken = err;
      });
    }
  } finally {
    client.release(broken);
  }
}
