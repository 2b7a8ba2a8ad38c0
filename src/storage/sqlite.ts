/** The SQLite file Antler keeps its state in: the binding store and the agent checkpoints share it. */
import Database from "better-sqlite3";

/** SQLite's `synchronous`: how hard each commit waits for the disk. */
export type Synchronous = "normal" | "full";

/**
 * Opens a database file in WAL mode. With `normal`, a commit does not wait for the disk: it
 * survives the process crashing or being killed, and only an OS crash or power cut can lose the
 * newest commits (the file stays consistent). `full` waits for the disk on every commit, which
 * blocks the event loop for about a millisecond each time.
 */
export function openDatabase(file: string, synchronous: Synchronous): Database.Database {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous === "full" ? "FULL" : "NORMAL"}`);
  db.pragma("busy_timeout = 5000");
  return db;
}
