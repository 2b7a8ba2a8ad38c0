/**
 * BindingStore on SQLite (better-sqlite3, WAL). Shares the file with the agent checkpoints;
 * its tables are prefixed `antler_`. better-sqlite3 is synchronous and fast on one file, so the
 * async interface here exists for other backends, not for this one.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { openDatabase, type Synchronous } from "../storage/sqlite.js";
import type { BindingStore, InboxEntry, InboxState, Json, PendingQuestion, ThreadBinding } from "./types.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS antler_threads (
  key TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  current INTEGER NOT NULL,
  PRIMARY KEY (key, thread_id)
);
CREATE INDEX IF NOT EXISTS antler_threads_current ON antler_threads (key, current);
CREATE TABLE IF NOT EXISTS antler_pending (
  thread_id TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  question_id TEXT NOT NULL UNIQUE,
  interrupt_id TEXT NOT NULL,
  question TEXT NOT NULL,
  options TEXT NOT NULL,
  kind TEXT,
  posted TEXT,
  created_at INTEGER NOT NULL,
  asked_by TEXT
);
CREATE TABLE IF NOT EXISTS antler_inbox (
  channel TEXT NOT NULL,
  event_id TEXT NOT NULL,
  key TEXT NOT NULL,
  state TEXT NOT NULL,
  payload TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  error TEXT,
  PRIMARY KEY (channel, event_id)
);
CREATE INDEX IF NOT EXISTS antler_inbox_state ON antler_inbox (state, received_at);
`;

interface PendingRow {
  thread_id: string;
  key: string;
  question_id: string;
  interrupt_id: string;
  question: string;
  options: string;
  kind: string | null;
  posted: string | null;
  created_at: number;
  asked_by: string | null;
}

interface InboxRow {
  channel: string;
  event_id: string;
  key: string;
  state: InboxState;
  payload: string;
  received_at: number;
  updated_at: number;
  error: string | null;
}

export class SqliteBindingStore implements BindingStore {
  private readonly db: Database.Database;
  /** Each statement is compiled once: every message goes through several of them. */
  private readonly statements = new Map<string, Database.Statement>();

  /**
   * Opens (creating if needed) the store in `file`; `:memory:` works for tests. `synchronous` is
   * SQLite's setting (see `storage.synchronous`).
   */
  constructor(
    file: string,
    private readonly now: () => number = Date.now,
    synchronous: Synchronous = "normal",
  ) {
    if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
    this.db = openDatabase(file, synchronous);
    this.db.exec(SCHEMA);
    this.migrate();
  }

  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  /** Brings a file written by an older version up to SCHEMA; each step is safe to repeat. */
  private migrate(): void {
    const pending = this.db.prepare("PRAGMA table_info(antler_pending)").all() as Array<{ name: string }>;
    // Questions stored before `asked_by` existed keep NULL: anyone may answer them, as before.
    if (!pending.some((c) => c.name === "asked_by")) this.db.exec("ALTER TABLE antler_pending ADD COLUMN asked_by TEXT");
  }

  async currentThread(key: string): Promise<string | undefined> {
    const row = this.sql("SELECT thread_id FROM antler_threads WHERE key = ? AND current = 1").get(key) as
      | { thread_id: string }
      | undefined;
    return row?.thread_id;
  }

  async bindThread(key: string, threadId: string): Promise<void> {
    const bind = this.db.transaction(() => {
      this.sql("UPDATE antler_threads SET current = 0 WHERE key = ?").run(key);
      this.sql(
        "INSERT INTO antler_threads (key, thread_id, created_at, current) VALUES (?, ?, ?, 1) ON CONFLICT (key, thread_id) DO UPDATE SET current = 1",
      ).run(key, threadId, this.now());
    });
    bind();
  }

  async threadHistory(key: string): Promise<ThreadBinding[]> {
    const rows = this.sql(
      "SELECT key, thread_id, created_at, current FROM antler_threads WHERE key = ? ORDER BY created_at DESC, rowid DESC",
    ).all(key) as Array<{ key: string; thread_id: string; created_at: number; current: number }>;
    return rows.map((r) => ({ key: r.key, threadId: r.thread_id, createdAt: r.created_at, current: r.current === 1 }));
  }

  async setPending(q: PendingQuestion): Promise<void> {
    this.sql(
      `INSERT INTO antler_pending (thread_id, key, question_id, interrupt_id, question, options, kind, posted, created_at, asked_by)
         VALUES (@threadId, @key, @questionId, @interruptId, @question, @options, @kind, @posted, @createdAt, @askedBy)
         ON CONFLICT (thread_id) DO UPDATE SET key = excluded.key, question_id = excluded.question_id,
           interrupt_id = excluded.interrupt_id, question = excluded.question, options = excluded.options,
           kind = excluded.kind, posted = excluded.posted, created_at = excluded.created_at,
           asked_by = excluded.asked_by`,
    ).run({
      ...q,
      options: JSON.stringify(q.options),
      kind: q.kind ?? null,
      posted: q.posted === undefined ? null : JSON.stringify(q.posted),
      askedBy: q.askedBy === undefined ? null : JSON.stringify(q.askedBy),
    });
  }

  async getPending(threadId: string): Promise<PendingQuestion | undefined> {
    const row = this.sql("SELECT * FROM antler_pending WHERE thread_id = ?").get(threadId) as PendingRow | undefined;
    return row && toPending(row);
  }

  async findPendingByQuestionId(questionId: string): Promise<PendingQuestion | undefined> {
    const row = this.sql("SELECT * FROM antler_pending WHERE question_id = ?").get(questionId) as PendingRow | undefined;
    return row && toPending(row);
  }

  async clearPending(threadId: string): Promise<void> {
    this.sql("DELETE FROM antler_pending WHERE thread_id = ?").run(threadId);
  }

  async recordInbound(entry: { channel: string; eventId: string; key: string; payload: Json }): Promise<boolean> {
    const at = this.now();
    const result = this.sql(
      `INSERT INTO antler_inbox (channel, event_id, key, state, payload, received_at, updated_at)
         VALUES (?, ?, ?, 'received', ?, ?, ?) ON CONFLICT (channel, event_id) DO NOTHING`,
    ).run(entry.channel, entry.eventId, entry.key, JSON.stringify(entry.payload), at, at);
    return result.changes === 1;
  }

  async setInboxState(channel: string, eventId: string, state: InboxState, error?: string): Promise<void> {
    this.sql("UPDATE antler_inbox SET state = ?, error = ?, updated_at = ? WHERE channel = ? AND event_id = ?").run(
      state,
      error ?? null,
      this.now(),
      channel,
      eventId,
    );
  }

  async getInbound(channel: string, eventId: string): Promise<InboxEntry | undefined> {
    const row = this.sql("SELECT * FROM antler_inbox WHERE channel = ? AND event_id = ?").get(channel, eventId) as
      | InboxRow
      | undefined;
    return row && toInbox(row);
  }

  async unfinished(): Promise<InboxEntry[]> {
    const rows = this.sql(
      "SELECT * FROM antler_inbox WHERE state IN ('received', 'running') ORDER BY received_at, rowid",
    ).all() as InboxRow[];
    return rows.map(toInbox);
  }

  async pruneInbox(before: number): Promise<number> {
    return this.sql("DELETE FROM antler_inbox WHERE state IN ('done', 'failed') AND received_at < ?").run(before).changes;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

function toPending(row: PendingRow): PendingQuestion {
  return {
    threadId: row.thread_id,
    key: row.key,
    questionId: row.question_id,
    interruptId: row.interrupt_id,
    question: row.question,
    options: JSON.parse(row.options) as string[],
    ...(row.kind ? { kind: row.kind } : {}),
    ...(row.posted ? { posted: JSON.parse(row.posted) as Json } : {}),
    ...(row.asked_by ? { askedBy: JSON.parse(row.asked_by) as NonNullable<PendingQuestion["askedBy"]> } : {}),
    createdAt: row.created_at,
  };
}

function toInbox(row: InboxRow): InboxEntry {
  return {
    channel: row.channel,
    eventId: row.event_id,
    key: row.key,
    state: row.state,
    payload: JSON.parse(row.payload) as Json,
    receivedAt: row.received_at,
    updatedAt: row.updated_at,
    ...(row.error ? { error: row.error } : {}),
  };
}
