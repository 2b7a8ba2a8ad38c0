/**
 * Keeping only the checkpoints a thread still needs, in the SQLite file (`storage.checkpoint_history:
 * latest`). LangGraph writes a checkpoint of the thread's whole state at every step and never
 * deletes one, so a thread would grow with the square of its length. What a thread needs, in each
 * namespace (`checkpoint_ns`) of its own:
 * - its newest checkpoint and that checkpoint's writes: the state, an open question (the
 *   interrupt is a write on it), the results of tasks that finished before a crash;
 * - the newest one's parent, with its writes: the saver reads the parent's `__pregel_tasks`
 *   writes for checkpoints older than format 4, and a checkpoint put out of order (a fork) may
 *   hang off it. Everything older than that parent goes, with its writes.
 *
 * Two more rules:
 * - a subgraph runs in a namespace of its own per task (`node:<task id>`), whose checkpoints name
 *   the root checkpoint the task started from (`metadata.parents[""]`). A namespace started from
 *   a root checkpoint older than the root's newest parent belongs to a step long finished, and is
 *   deleted whole when the root moves on;
 * - a graph with a `DeltaChannel` keeps its value as writes along the parent chain back to the
 *   last snapshot; while a checkpoint says some delta channel has not snapshotted since
 *   (`counters_since_delta_snapshot` in its metadata), nothing of that thread is pruned.
 *
 * Every statement is limited to one tenant's rows (the tables are shared; see checkpoints.ts).
 */
import type { CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import type Database from "better-sqlite3";
import { reclaimSpace } from "../sqlite.js";
import { DEFAULT_TENANT } from "../tenant.js";

/** The tenant of a row of `checkpoints`; the default serde stores metadata as JSON. */
const TENANT_OF = `COALESCE(json_extract(CAST(metadata AS TEXT), '$.tenant'), '${DEFAULT_TENANT}')`;

/** True for a row of `checkpoints` that belongs to `@tenant`. */
export const OWNED = `${TENANT_OF} = @tenant`;

/** Namespaces of the thread whose subgraph task started from a root checkpoint older than `@keep`. */
const STALE_NS = `SELECT checkpoint_ns FROM checkpoints WHERE thread_id = @thread_id AND checkpoint_ns != ''
  AND ${OWNED} AND json_extract(CAST(metadata AS TEXT), '$.parents.""') < @keep`;

const SQL = {
  /** `metadata` in the subquery is the checkpoint's: `writes` has no such column. */
  oldWrites: `DELETE FROM writes WHERE thread_id = @thread_id AND checkpoint_ns = @checkpoint_ns AND checkpoint_id < @keep
    AND EXISTS (SELECT 1 FROM checkpoints WHERE checkpoints.thread_id = writes.thread_id
      AND checkpoints.checkpoint_ns = writes.checkpoint_ns AND checkpoints.checkpoint_id = writes.checkpoint_id AND ${OWNED})`,
  oldCheckpoints: `DELETE FROM checkpoints WHERE thread_id = @thread_id AND checkpoint_ns = @checkpoint_ns
    AND checkpoint_id < @keep AND ${OWNED}`,
  staleWrites: `DELETE FROM writes WHERE thread_id = @thread_id AND checkpoint_ns IN (${STALE_NS})`,
  staleCheckpoints: `DELETE FROM checkpoints WHERE thread_id = @thread_id AND ${OWNED} AND checkpoint_ns IN (${STALE_NS})`,
};

/** What `sweep` looks at: the newest checkpoint of each tenant's thread and namespace that may have more to delete. */
const CANDIDATES = `SELECT thread_id, checkpoint_ns, tenant, parent, counters FROM (
    SELECT thread_id, checkpoint_ns, ${TENANT_OF} AS tenant, parent_checkpoint_id AS parent,
      json_extract(CAST(metadata AS TEXT), '$.counters_since_delta_snapshot') AS counters,
      row_number() OVER (PARTITION BY thread_id, checkpoint_ns, ${TENANT_OF} ORDER BY checkpoint_id DESC) AS rn,
      count(*) OVER (PARTITION BY thread_id, checkpoint_ns, ${TENANT_OF}) AS n
    FROM checkpoints) AS newest
  WHERE rn = 1 AND parent IS NOT NULL AND (n > 2 OR (checkpoint_ns = ''
    AND EXISTS (SELECT 1 FROM checkpoints sub WHERE sub.thread_id = newest.thread_id AND sub.checkpoint_ns != '')))`;

/** One checkpoint just written: where, and the parent it names. */
export interface Written {
  thread_id: string;
  checkpoint_ns: string;
  /** The parent's id (`config.configurable.checkpoint_id` of the put); none for a thread's first. */
  parent: string | undefined;
  metadata: CheckpointMetadata | undefined;
}

/** Whether a checkpoint still needs its ancestors' writes: a delta channel has not snapshotted since. */
export function awaitsDeltaSnapshot(metadata: unknown): boolean {
  const counters = (metadata as { counters_since_delta_snapshot?: unknown } | undefined)?.counters_since_delta_snapshot;
  return counters !== undefined && counters !== null;
}

/** Prunes one tenant's threads in a database whose checkpoint tables exist. */
export class SqlitePruner {
  private statements: Record<keyof typeof SQL, Database.Statement> | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly tenant: string,
  ) {}

  /**
   * After `written` was put: deletes what its thread no longer needs, then gives the file's free
   * pages back when they are many. Returns the rows deleted. Never throws: a failure (the file
   * busy past its timeout) leaves the rows for the next put.
   */
  afterPut(written: Written): number {
    try {
      const deleted = this.db.transaction(() => this.prune(written))();
      if (deleted > 0) reclaimSpace(this.db);
      return deleted;
    } catch {
      // The checkpoint is saved; what was not deleted now goes with the thread's next one.
      return 0;
    }
  }

  /** The pruning of `afterPut`, inside the caller's transaction, without reclaiming. */
  prune({ thread_id, checkpoint_ns, parent, metadata }: Written): number {
    if (parent === undefined || awaitsDeltaSnapshot(metadata)) return 0;
    this.statements ??= prepare(this.db);
    const s = this.statements;
    const args = { thread_id, checkpoint_ns, keep: parent, tenant: this.tenant };
    let deleted = s.oldWrites.run(args).changes + s.oldCheckpoints.run(args).changes;
    if (checkpoint_ns === "") {
      const root = { thread_id, keep: parent, tenant: this.tenant };
      deleted += s.staleWrites.run(root).changes + s.staleCheckpoints.run(root).changes;
    }
    return deleted;
  }
}

function prepare(db: Database.Database): Record<keyof typeof SQL, Database.Statement> {
  const entries = Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)]);
  return Object.fromEntries(entries) as Record<keyof typeof SQL, Database.Statement>;
}

/**
 * Prunes every tenant's threads in the file, as `afterPut` would have after each thread's newest
 * checkpoint: for a file written before pruning existed, or with `checkpoint_history: all`. One
 * transaction; returns the rows deleted and the threads they came from. Does nothing when the
 * checkpoint tables do not exist yet.
 */
export function sweep(db: Database.Database): { rows: number; threads: number } {
  const tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('checkpoints', 'writes')");
  if (tables.pluck().get() !== 2) return { rows: 0, threads: 0 };
  const pruners = new Map<string, SqlitePruner>();
  const pruner = (tenant: string) => {
    const known = pruners.get(tenant);
    if (known) return known;
    const made = new SqlitePruner(db, tenant);
    pruners.set(tenant, made);
    return made;
  };
  return db.transaction(() => {
    const candidates = db.prepare(CANDIDATES).all() as Array<{
      thread_id: string;
      checkpoint_ns: string;
      tenant: string;
      parent: string;
      counters: string | null;
    }>;
    const threads = new Set<string>();
    let rows = 0;
    for (const c of candidates) {
      const metadata = { counters_since_delta_snapshot: c.counters } as unknown as CheckpointMetadata;
      const deleted = pruner(c.tenant).prune({ ...c, metadata });
      rows += deleted;
      if (deleted > 0) threads.add(`${c.tenant}\u0000${c.thread_id}`);
    }
    return { rows, threads: threads.size };
  })();
}
