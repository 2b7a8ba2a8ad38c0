/**
 * Agent checkpoints in the SQLite file Antler shares with the binding store: one connection for
 * every tenant's checkpointer (`SqliteCheckpoints`), and the checkpointer of one tenant
 * (`TenantCheckpointSaver`). That is LangGraph's `SqliteSaver` with the tenant added:
 * - every checkpoint it writes has `tenant` in its metadata;
 * - reads (`getTuple`, `list`, and what LangGraph builds on them: state, history, replay, resume)
 *   treat another tenant's checkpoints as absent. A checkpoint without `tenant`, written before
 *   tenants existed, is the default tenant's;
 * - `deleteThread` deletes only this tenant's checkpoints of the thread, with their writes;
 * - with `history: "latest"` (Antler's default), each `put` then deletes what the thread no longer
 *   needs (prune.ts): its checkpoints older than the new one's parent, with their writes.
 *
 * The tenant is matched in SQL rather than on the newest row, so another tenant's checkpoints in a
 * thread of the same id never hide this tenant's own. Writing costs nothing extra: `put` only adds
 * a key to the metadata it already stores. `putWrites` is not checked: writes hang off a checkpoint
 * id, and this saver hands out the ids of its own tenant's checkpoints only.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Checkpoint, CheckpointListOptions, CheckpointMetadata, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type Database from "better-sqlite3";
import type { CheckpointHistory, Checkpoints } from "../kind.js";
import { openDatabase, reclaimSpace, type Synchronous } from "../sqlite.js";
import { DEFAULT_TENANT } from "../tenant.js";
import { OWNED, SqlitePruner } from "./prune.js";
import { SqliteStore } from "./store.js";

/** Walks the primary key newest first and stops at the first owned row: usually the newest. */
const LATEST = `SELECT checkpoint_id FROM checkpoints
  WHERE thread_id = @thread_id AND checkpoint_ns = @checkpoint_ns AND ${OWNED}
  ORDER BY checkpoint_id DESC LIMIT 1`;

/** `metadata` in the subquery is the checkpoint's: `writes` has no such column. */
const DELETE_WRITES = `DELETE FROM writes WHERE thread_id = @thread_id AND EXISTS (
  SELECT 1 FROM checkpoints WHERE checkpoints.thread_id = writes.thread_id
    AND checkpoints.checkpoint_ns = writes.checkpoint_ns AND checkpoints.checkpoint_id = writes.checkpoint_id AND ${OWNED})`;

const DELETE_CHECKPOINTS = `DELETE FROM checkpoints WHERE thread_id = @thread_id AND ${OWNED}`;

interface CheckpointKey {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
}

/** What a saver keeps; see `storage.checkpoint_history`. */
export interface SaverOptions {
  /** `latest` (default): only what each thread still needs; `all`: every checkpoint, as LangGraph's saver. */
  history?: CheckpointHistory;
}

/** A `SqliteSaver` that reads and writes only `tenant`'s checkpoints in a database it shares. */
export class TenantCheckpointSaver extends SqliteSaver {
  private latest: Database.Statement | undefined;
  private readonly pruner: SqlitePruner | undefined;

  constructor(
    db: Database.Database,
    readonly tenant: string,
    options: SaverOptions = {},
  ) {
    super(db);
    if ((options.history ?? "latest") === "latest") this.pruner = new SqlitePruner(db, tenant);
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    const tagged: CheckpointMetadata<{ tenant: string }> = { ...metadata, tenant: this.tenant };
    const saved = await super.put(config, checkpoint, tagged);
    this.pruner?.afterPut(written(config, metadata));
    return saved;
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    if (checkpoint_id) {
      const tuple = await super.getTuple(config);
      return tuple && this.owns(tuple.metadata) ? tuple : undefined;
    }
    this.setup();
    this.latest ??= this.db.prepare(LATEST);
    const row = this.latest.get({ thread_id, checkpoint_ns, tenant: this.tenant }) as { checkpoint_id: string } | undefined;
    if (!row) return undefined;
    return super.getTuple({ configurable: { thread_id, checkpoint_ns, checkpoint_id: row.checkpoint_id } });
  }

  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    this.setup();
    for (const key of this.ownedKeys(config, options)) {
      const tuple = await super.getTuple({ configurable: key });
      if (tuple) yield tuple;
    }
  }

  override async deleteThread(threadId: string): Promise<void> {
    this.setup();
    const args = { thread_id: threadId, tenant: this.tenant };
    this.db.transaction(() => {
      this.db.prepare(DELETE_WRITES).run(args);
      this.db.prepare(DELETE_CHECKPOINTS).run(args);
    })();
    reclaimSpace(this.db);
  }

  private owns(metadata: CheckpointMetadata | undefined): boolean {
    const tenant = (metadata as { tenant?: unknown } | undefined)?.tenant;
    return (tenant ?? DEFAULT_TENANT) === this.tenant;
  }

  /** The checkpoints `list` yields, newest first: SqliteSaver's conditions plus this tenant's. */
  private ownedKeys(config: RunnableConfig, options: CheckpointListOptions | undefined): CheckpointKey[] {
    const { thread_id, checkpoint_ns } = config.configurable ?? {};
    const { limit, before, filter } = options ?? {};
    const where = [OWNED];
    const args: Record<string, unknown> = { tenant: this.tenant };
    const add = (condition: string, values: Record<string, unknown>) => {
      where.push(condition);
      Object.assign(args, values);
    };
    if (thread_id) add("thread_id = @thread_id", { thread_id });
    if (checkpoint_ns !== undefined && checkpoint_ns !== null) add("checkpoint_ns = @checkpoint_ns", { checkpoint_ns });
    const beforeId = before?.configurable?.checkpoint_id;
    if (beforeId !== undefined) add("checkpoint_id < @before", { before: beforeId });
    const wanted = Object.entries(filter ?? {}).filter(([, value]) => value !== undefined);
    wanted.forEach(([key, value], i) => {
      add(`jsonb(CAST(metadata AS TEXT))->@path${i} = @value${i}`, {
        [`path${i}`]: `$.${key}`,
        [`value${i}`]: JSON.stringify(value),
      });
    });
    const sql = `SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints WHERE ${where.join(" AND ")}
      ORDER BY checkpoint_id DESC${limit ? ` LIMIT ${Math.trunc(limit)}` : ""}`;
    return this.db.prepare(sql).all(args) as CheckpointKey[];
  }
}

/**
 * The checkpointer of a lone agent (no tenants): LangGraph's own, its checkpoints untagged (every
 * tenant-aware reader takes them for the default tenant's), pruned as the default tenant's.
 */
export class LoneCheckpointSaver extends SqliteSaver {
  private readonly pruner: SqlitePruner | undefined;

  constructor(db: Database.Database, options: SaverOptions = {}) {
    super(db);
    if ((options.history ?? "latest") === "latest") this.pruner = new SqlitePruner(db, DEFAULT_TENANT);
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    const saved = await super.put(config, checkpoint, metadata);
    this.pruner?.afterPut(written(config, metadata));
    return saved;
  }
}

/** The checkpoint a `put` with `config` just wrote, as pruning sees it. */
function written(config: RunnableConfig, metadata: CheckpointMetadata) {
  const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
  return {
    thread_id: String(thread_id),
    checkpoint_ns: String(checkpoint_ns),
    parent: checkpoint_id as string | undefined,
    metadata,
  };
}

/** Every tenant's checkpointer and store over one connection to the file; `close` closes it. */
export class SqliteCheckpoints implements Checkpoints {
  private readonly db: Database.Database;
  private readonly stores = new Map<string, SqliteStore>();

  /** Opens `file` (WAL), creating its folder first; `options.history` is what every saver keeps. */
  constructor(
    file: string,
    synchronous: Synchronous,
    private readonly options: SaverOptions = {},
  ) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.db = openDatabase(file, synchronous);
  }

  /** `tenant`'s saver; without a tenant, a lone agent's, whose untagged checkpoints are the default tenant's. */
  saver(tenant?: string): SqliteSaver {
    return tenant === undefined
      ? new LoneCheckpointSaver(this.db, this.options)
      : new TenantCheckpointSaver(this.db, tenant, this.options);
  }

  /** `tenant`'s store in the same file (`antler_store`, rows marked with the tenant). */
  store(tenant: string = DEFAULT_TENANT): SqliteStore {
    let store = this.stores.get(tenant);
    if (!store) {
      store = new SqliteStore(this.db, tenant);
      this.stores.set(tenant, store);
    }
    return store;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
