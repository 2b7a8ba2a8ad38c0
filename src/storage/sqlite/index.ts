/**
 * `storage.kind: sqlite` (the default): one gateway process keeps everything in the file at
 * `storage.path`: the binding store's `antler_*` tables and the agents' checkpoints, each tenant's
 * rows marked with their tenant. One process owns the file, so there is no replica coordinator.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import type { Logger } from "../../log/logger.js";
import type { StorageKind, StorageSettings } from "../kind.js";
import { makeIncremental, openDatabase, pageBytes, reclaimSpace } from "../sqlite.js";
import { SqliteBindingStore } from "./binding-store.js";
import { SqliteCheckpoints } from "./checkpoints.js";
import { sweep } from "./prune.js";

export { SqliteBindingStore } from "./binding-store.js";
export { LoneCheckpointSaver, SqliteCheckpoints, TenantCheckpointSaver } from "./checkpoints.js";

/** The most live data a file may hold to be rewritten at start to turn auto-vacuum on (a `VACUUM` takes seconds per GiB). */
export const VACUUM_AT_START_MAX_BYTES = 512 * 1024 * 1024;

export const sqliteStorage: StorageKind = {
  kind: "sqlite",
  async open(settings, { baseDir, logger }) {
    const file = path.resolve(baseDir, settings.path);
    if (existsSync(file)) {
      try {
        tidy(file, settings, logger);
      } catch (err) {
        // Another process holding the file, a full disk: the gateway works without it, and tries at its next start.
        logger.warn({ err, file }, "storage: could not prune old checkpoints or reclaim space at start");
      }
    }
    return { store: new SqliteBindingStore(file, Date.now, settings.synchronous) };
  },
  checkpoints(settings, baseDir) {
    return new SqliteCheckpoints(path.resolve(baseDir, settings.path), settings.synchronous, {
      history: settings.checkpoint_history,
    });
  },
};

/**
 * At the gateway's start, before anything else opens the file: prunes every thread as its next
 * checkpoint would (threads written before pruning, or under `checkpoint_history: all`), turns
 * auto-vacuum on in a file made without it, and gives the free pages back to the disk.
 */
export function tidy(file: string, settings: StorageSettings, logger: Logger, maxVacuumBytes = VACUUM_AT_START_MAX_BYTES): void {
  const db = openDatabase(file, settings.synchronous);
  try {
    const before = pageBytes(db).total;
    const pruned = (settings.checkpoint_history ?? "latest") === "latest" ? sweep(db) : { rows: 0, threads: 0 };
    const mode = makeIncremental(db, maxVacuumBytes);
    if (mode !== "converted") reclaimSpace(db, 0);
    const after = pageBytes(db).total;
    if (pruned.rows > 0 || mode === "converted") {
      logger.info(
        {
          file,
          prunedRows: pruned.rows,
          prunedThreads: pruned.threads,
          bytesBefore: before,
          bytesAfter: after,
          vacuumed: mode === "converted",
        },
        "storage: pruned old checkpoints and reclaimed the free space",
      );
    }
    if (mode === "too-big") {
      logger.warn(
        { file, bytes: before },
        `storage: ${file} was made without auto-vacuum and is too big to rewrite at start, so space freed by pruning is reused but never given back to the disk; stop the gateway and run: sqlite3 ${file} "PRAGMA auto_vacuum = INCREMENTAL; VACUUM;"`,
      );
    }
  } finally {
    db.close();
  }
}
