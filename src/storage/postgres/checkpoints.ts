/**
 * Agent checkpoints on PostgreSQL (`storage.kind: postgres`): LangGraph's `PostgresSaver`, one
 * per tenant, each in a schema of its own. A schema per tenant keeps tenants apart without
 * touching the saver's SQL: the saver qualifies every table with its schema, so no query of one
 * tenant's saver can name another's tables. All tenants share one pool.
 *
 * `PostgresSaver.setup()` creates its schema and tables, and several replicas may start at once,
 * so it runs under the migration lock; it opens its own connection beside the lock's, hence the
 * pool's minimum of two.
 *
 * Each tenant's long-term store (`store(tenant)`, store.ts) lives in the same schema, on the same
 * pool, its tables set up the same way.
 *
 * With `history: "latest"` (Antler's default) each saver prunes its threads as it writes
 * (prune.ts), and once set up it sweeps the tenant's older threads in the background; `close`
 * waits for that sweep.
 */
import { createHash } from "node:crypto";
import type { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type pg from "pg";
import type { CheckpointHistory, Checkpoints } from "../kind.js";
import { openPool, type PostgresConnection, withMigrationLock } from "../postgres.js";
import { DEFAULT_TENANT } from "../tenant.js";
import { PrunedPostgresSaver } from "./prune.js";
import { SharedPoolPostgresStore } from "./store.js";

const PREFIX = "antler_checkpoints_";

/**
 * The schema of a tenant's checkpoints: `antler_checkpoints_<tenant>` for a short lower-case
 * name; any other name is shortened to what an identifier may hold plus a hash of the whole
 * name, so two tenants never share one (`Acme` and `acme` differ).
 */
export function checkpointSchema(tenant: string): string {
  if (/^[a-z0-9_]{1,40}$/.test(tenant)) return PREFIX + tenant;
  const slug = tenant
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .slice(0, 30);
  const hash = createHash("sha256").update(tenant).digest("hex").slice(0, 12);
  return `${PREFIX}${slug}_${hash}`;
}

/** Every tenant's checkpointer over one database; `close` ends the pool they share. */
export class PostgresCheckpoints implements Checkpoints {
  private readonly pool: pg.Pool;
  private readonly savers = new Map<string, Promise<PostgresSaver>>();
  private readonly stores = new Map<string, Promise<SharedPoolPostgresStore>>();
  private readonly sweeps = new Set<Promise<unknown>>();

  /** `options.history` is what every saver keeps (`latest` when not given). */
  constructor(
    connection: PostgresConnection,
    private readonly options: { history?: CheckpointHistory | undefined } = {},
  ) {
    this.pool = openPool(connection);
  }

  /** The tenant's checkpointer (a lone agent's is the default tenant's), its tables created on first use. */
  saver(tenant: string = DEFAULT_TENANT): Promise<PostgresSaver> {
    let saver = this.savers.get(tenant);
    if (!saver) {
      const created = new PrunedPostgresSaver(this.pool, checkpointSchema(tenant), this.options.history);
      saver = withMigrationLock(this.pool, () => created.setup()).then(() => {
        if (created.history === "latest") this.inBackground(created.sweep());
        return created;
      });
      // A failed set-up is tried again next time rather than remembered.
      saver.catch(() => this.savers.delete(tenant));
      this.savers.set(tenant, saver);
    }
    return saver;
  }

  /** The tenant's store, in its checkpoint schema, its tables created on first use. */
  store(tenant: string = DEFAULT_TENANT): Promise<SharedPoolPostgresStore> {
    let store = this.stores.get(tenant);
    if (!store) {
      const created = new SharedPoolPostgresStore(this.pool, checkpointSchema(tenant));
      store = withMigrationLock(this.pool, () => created.setup()).then(() => created);
      store.catch(() => this.stores.delete(tenant));
      this.stores.set(tenant, store);
    }
    return store;
  }

  /** A sweep runs beside the runs; a failure only leaves its rows for the threads' next checkpoints. */
  private inBackground(work: Promise<unknown>): void {
    const tracked = work.catch(() => undefined).finally(() => this.sweeps.delete(tracked));
    this.sweeps.add(tracked);
  }

  async close(): Promise<void> {
    await Promise.all(this.sweeps);
    await this.pool.end();
  }
}
