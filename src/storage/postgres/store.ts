/**
 * A tenant's LangGraph store on PostgreSQL: LangGraph's own `PostgresStore`, its tables (`store`,
 * `store_migrations`) in the tenant's checkpoint schema, so tenants stay apart the way their
 * checkpoints do and no query of one tenant's store names another's tables.
 *
 * `PostgresStore` opens a pool of its own from its connection options, and that pool has no
 * handler for the errors an idle connection raises (a database restart would end the process).
 * This store hands it the checkpoints' pool instead (the one it made is never connected): memory
 * opens no connections beside the checkpoints', and the pool's error handler covers it. The swap
 * reads a private field of the pinned version (1.0.5); the constructor checks it is there.
 *
 * Note on search: `PostgresStore` matches a namespace prefix with `LIKE 'a:b%'`, by characters,
 * so `["memory", "p1"]` also finds `["memory", "p12"]` (and `_` matches any character). Code that
 * needs one namespace exactly filters the items by their `namespace` (harness/memory does).
 */
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import type pg from "pg";

export class SharedPoolPostgresStore extends PostgresStore {
  constructor(pool: pg.Pool, schema: string) {
    // Tables are set up by the caller, under the migration lock, never on first use.
    super({ connectionOptions: { max: 1 }, schema, ensureTables: false });
    const core = (this as unknown as { core?: { pool?: pg.Pool } }).core;
    if (!core?.pool) throw new Error("[antler] [postgres] PostgresStore has no core.pool to share: check its pinned version");
    void core.pool.end();
    core.pool = pool;
  }

  /** The pool is the checkpoints': their `close()` ends it. */
  override async stop(): Promise<void> {}
}
