/** The SQLite file Antler keeps its state in: the binding store and the agent checkpoints share it. */
import Database from "better-sqlite3";

/** SQLite's `synchronous`: how hard each commit waits for the disk. */
export type Synchronous = "normal" | "full";

/** `PRAGMA auto_vacuum`'s value for INCREMENTAL: free pages stay in the file until `incremental_vacuum`. */
const INCREMENTAL = 2;

/** The free pages a file may hold before `reclaimSpace` gives them back to the disk. */
export const RECLAIM_AT_BYTES = 2 * 1024 * 1024;

/**
 * Opens a database file in WAL mode. With `normal`, a commit does not wait for the disk: it
 * survives the process crashing or being killed, and only an OS crash or power cut can lose the
 * newest commits (the file stays consistent). `full` waits for the disk on every commit, which
 * blocks the event loop for about a millisecond each time.
 *
 * A file without tables yet gets `auto_vacuum = INCREMENTAL` (it can only be set then, or by a
 * `VACUUM`): what pruning deletes can then be given back to the disk (`reclaimSpace`).
 */
export function openDatabase(file: string, synchronous: Synchronous): Database.Database {
  const db = new Database(file);
  if (db.prepare("SELECT count(*) FROM sqlite_master").pluck().get() === 0) db.pragma("auto_vacuum = INCREMENTAL");
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous === "full" ? "FULL" : "NORMAL"}`);
  db.pragma("busy_timeout = 5000");
  return db;
}

/** Whether the file gives free pages back to the disk on `incremental_vacuum`. */
export function incrementalVacuum(db: Database.Database): boolean {
  return db.pragma("auto_vacuum", { simple: true }) === INCREMENTAL;
}

/** The bytes of the file's pages that hold nothing (deleted rows), and of all its pages. */
export function pageBytes(db: Database.Database): { free: number; total: number } {
  const size = db.pragma("page_size", { simple: true }) as number;
  const free = db.pragma("freelist_count", { simple: true }) as number;
  const total = db.pragma("page_count", { simple: true }) as number;
  return { free: free * size, total: total * size };
}

/**
 * Gives the file's free pages back to the disk when there are more than `atBytes` of them and the
 * file is in incremental mode. Below that they are left for the next rows, which reuse them.
 * Returns the bytes given back.
 */
export function reclaimSpace(db: Database.Database, atBytes = RECLAIM_AT_BYTES): number {
  const { free } = pageBytes(db);
  if (free <= atBytes || !incrementalVacuum(db)) return 0;
  db.exec("PRAGMA incremental_vacuum");
  return free - pageBytes(db).free;
}

/**
 * Turns a file made before auto-vacuum into an incremental one: one `VACUUM`, which copies what
 * the file holds into a new file (it needs about that much free disk twice, and holds the write
 * lock meanwhile), so only files holding up to `maxBytes` are rewritten. Returns what happened.
 */
export function makeIncremental(db: Database.Database, maxBytes: number): "already" | "converted" | "too-big" {
  if (incrementalVacuum(db)) return "already";
  const { free, total } = pageBytes(db);
  if (total - free > maxBytes) return "too-big";
  db.pragma("auto_vacuum = INCREMENTAL");
  db.exec("VACUUM");
  return "converted";
}
