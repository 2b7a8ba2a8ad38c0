/**
 * Keeping only the checkpoints a thread still needs, on PostgreSQL (`storage.checkpoint_history:
 * latest`): the same rules as on SQLite (src/storage/sqlite/prune.ts): per thread and namespace
 * the newest checkpoint and its parent, with their writes; a subgraph's namespace goes whole once
 * the root has moved two checkpoints past the one its task started from; nothing while a delta
 * channel waits for its snapshot.
 *
 * PostgresSaver keeps channel values apart from checkpoints, in `checkpoint_blobs` keyed by
 * (thread, namespace, channel, version), and writes a blob only when its channel changed: a new
 * checkpoint names the versions of the channels it did not change, whose blobs an older
 * checkpoint wrote. So a blob goes only when no kept checkpoint of its namespace names its
 * version. A checkpoint names the same versions as its parent for every channel it did not
 * change, so the kept pair always covers what the next checkpoint will name.
 *
 * Pruning runs after `put` has committed, as one statement of its own: a checkpoint is never lost
 * to it, and a failure (a lock conflict with another replica's sweep) only leaves the rows for the
 * thread's next checkpoint. Each tenant's tables are in its own schema, so nothing here can reach
 * another tenant's rows.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { ChannelVersions, Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type pg from "pg";
import type { CheckpointHistory } from "../kind.js";

/** Whether a checkpoint still needs its ancestors' writes: a delta channel has not snapshotted since. */
function awaitsDeltaSnapshot(metadata: unknown): boolean {
  const counters = (metadata as { counters_since_delta_snapshot?: unknown } | undefined)?.counters_since_delta_snapshot;
  return counters !== undefined && counters !== null;
}

/**
 * One statement: $1 thread, $2 namespace, $3 the parent to keep. Deletes the namespace's older
 * checkpoints and writes, the blobs no kept checkpoint names and, when $2 is the root, the
 * namespaces of subgraph tasks started before $3.
 */
function pruneSql(schema: string): string {
  const t = (table: string) => `"${schema}".${table}`;
  return `WITH stale AS (
      SELECT DISTINCT checkpoint_ns FROM ${t("checkpoints")}
      WHERE $2 = '' AND thread_id = $1 AND checkpoint_ns <> '' AND metadata -> 'parents' ->> '' < $3
    ), cps AS (
      DELETE FROM ${t("checkpoints")} WHERE thread_id = $1
        AND ((checkpoint_ns = $2 AND checkpoint_id < $3) OR checkpoint_ns IN (SELECT checkpoint_ns FROM stale))
      RETURNING 1
    ), ws AS (
      DELETE FROM ${t("checkpoint_writes")} WHERE thread_id = $1
        AND ((checkpoint_ns = $2 AND checkpoint_id < $3) OR checkpoint_ns IN (SELECT checkpoint_ns FROM stale))
      RETURNING 1
    ), bs AS (
      DELETE FROM ${t("checkpoint_blobs")} b WHERE b.thread_id = $1
        AND ((b.checkpoint_ns = $2 AND NOT EXISTS (
          SELECT 1 FROM ${t("checkpoints")} c WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id >= $3
            AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version))
          OR b.checkpoint_ns IN (SELECT checkpoint_ns FROM stale))
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM cps) + (SELECT count(*) FROM ws) + (SELECT count(*) FROM bs) AS deleted`;
}

/** The newest checkpoint of each thread and namespace that may have more to delete. */
function candidatesSql(schema: string): string {
  const cps = `"${schema}".checkpoints`;
  return `SELECT thread_id, checkpoint_ns, parent_checkpoint_id AS parent, metadata -> 'counters_since_delta_snapshot' AS counters
    FROM (SELECT thread_id, checkpoint_ns, parent_checkpoint_id, metadata,
        row_number() OVER (PARTITION BY thread_id, checkpoint_ns ORDER BY checkpoint_id DESC) AS rn,
        count(*) OVER (PARTITION BY thread_id, checkpoint_ns) AS n
      FROM ${cps}) AS newest
    WHERE rn = 1 AND parent_checkpoint_id IS NOT NULL AND (n > 2 OR (checkpoint_ns = ''
      AND EXISTS (SELECT 1 FROM ${cps} sub WHERE sub.thread_id = newest.thread_id AND sub.checkpoint_ns <> '')))`;
}

/** LangGraph's `PostgresSaver` in one tenant's schema, pruning each thread as it writes (with `latest`). */
export class PrunedPostgresSaver extends PostgresSaver {
  private readonly pruneSql: string;

  constructor(
    private readonly db: pg.Pool,
    private readonly schema: string,
    readonly history: CheckpointHistory = "latest",
  ) {
    super(db, undefined, { schema });
    this.pruneSql = pruneSql(schema);
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const saved = await super.put(config, checkpoint, metadata, newVersions);
    if (this.history === "latest") {
      const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
      if (checkpoint_id !== undefined && !awaitsDeltaSnapshot(metadata)) {
        await this.prune(String(thread_id), String(checkpoint_ns), String(checkpoint_id)).catch(() => 0);
      }
    }
    return saved;
  }

  /** Deletes what `thread_id`'s namespace no longer needs when `keep` is its newest checkpoint's parent; returns the rows. */
  async prune(threadId: string, ns: string, keep: string): Promise<number> {
    const { rows } = await this.db.query<{ deleted: string }>(this.pruneSql, [threadId, ns, keep]);
    return Number(rows[0]?.deleted ?? 0);
  }

  /**
   * Prunes every thread of this tenant as its next checkpoint would: threads written before
   * pruning, or under `checkpoint_history: all`. One thread and namespace per statement, so no
   * lock is held long. Returns the rows deleted and the threads they came from.
   */
  async sweep(): Promise<{ rows: number; threads: number }> {
    const { rows: candidates } = await this.db.query<{
      thread_id: string;
      checkpoint_ns: string;
      parent: string;
      counters: unknown;
    }>(candidatesSql(this.schema));
    const threads = new Set<string>();
    let rows = 0;
    for (const c of candidates) {
      if (c.counters !== null && c.counters !== undefined) continue;
      const deleted = await this.prune(c.thread_id, c.checkpoint_ns, c.parent).catch(() => 0);
      rows += deleted;
      if (deleted > 0) threads.add(c.thread_id);
    }
    return { rows, threads: threads.size };
  }
}
