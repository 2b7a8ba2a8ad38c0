/**
 * BindingStore on SQLite (better-sqlite3, WAL). Shares the file with the agent checkpoints;
 * its tables are prefixed `antler_` (see schema.ts for them and their migrations).
 * better-sqlite3 is synchronous and fast on one file, so the async interface here exists for
 * other backends, not for this one.
 *
 * Every table has a `tenant` column that leads its keys, and every statement names the tenant,
 * so a tenant view shares the connection and the compiled statements with the store it came from.
 * The outbox and the schedules are in outbox.ts and schedules.ts, which this class builds on.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { bindingOf, inboxOf, pendingOf } from "../../bindings/rows.js";
import {
  type BindingStore,
  DEFAULT_TENANT,
  type InboxEntry,
  type InboxState,
  type Json,
  type PendingQuestion,
  type ThreadBinding,
} from "../../bindings/types.js";
import { openDatabase, type Synchronous } from "../sqlite.js";
import { SqliteScheduleStore } from "./schedules.js";
import { migrate } from "./schema.js";

interface ThreadRow {
  key: string;
  thread_id: string;
  agent: string | null;
  created_at: number;
  current: number;
}

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
  approval: string | null;
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

const THREAD_COLUMNS = "key, thread_id, agent, created_at, current";

/** One tenant's rows. `SqliteBindingStore` is the default tenant's and owns the file. */
class SqliteTenantStore extends SqliteScheduleStore implements BindingStore {
  forTenant(tenant: string): BindingStore {
    return new SqliteTenantStore(this.conn, tenant);
  }

  async currentThread(key: string): Promise<string | undefined> {
    return (await this.currentBinding(key))?.threadId;
  }

  async currentBinding(key: string): Promise<ThreadBinding | undefined> {
    const row = this.sql(`SELECT ${THREAD_COLUMNS} FROM antler_threads WHERE tenant = ? AND key = ? AND current = 1`).get(
      this.tenant,
      key,
    ) as ThreadRow | undefined;
    return row && toBinding(row);
  }

  async bindThread(key: string, threadId: string, agent?: string): Promise<void> {
    const bind = this.conn.db.transaction(() => {
      this.sql("UPDATE antler_threads SET current = 0 WHERE tenant = ? AND key = ?").run(this.tenant, key);
      this.sql(
        `INSERT INTO antler_threads (tenant, key, thread_id, agent, created_at, current) VALUES (?, ?, ?, ?, ?, 1)
           ON CONFLICT (tenant, key, thread_id) DO UPDATE SET current = 1, agent = COALESCE(excluded.agent, agent)`,
      ).run(this.tenant, key, threadId, agent ?? null, this.conn.now());
    });
    bind();
  }

  async threadHistory(key: string): Promise<ThreadBinding[]> {
    const rows = this.sql(
      `SELECT ${THREAD_COLUMNS} FROM antler_threads WHERE tenant = ? AND key = ? ORDER BY created_at DESC, rowid DESC`,
    ).all(this.tenant, key) as ThreadRow[];
    return rows.map(toBinding);
  }

  async chosenAgent(key: string): Promise<string | undefined> {
    const row = this.sql("SELECT agent FROM antler_agent_choice WHERE tenant = ? AND key = ?").get(this.tenant, key) as
      | { agent: string }
      | undefined;
    return row?.agent;
  }

  async setChosenAgent(key: string, agent: string | undefined): Promise<void> {
    if (agent === undefined) {
      this.sql("DELETE FROM antler_agent_choice WHERE tenant = ? AND key = ?").run(this.tenant, key);
      return;
    }
    this.sql(
      `INSERT INTO antler_agent_choice (tenant, key, agent, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (tenant, key) DO UPDATE SET agent = excluded.agent, updated_at = excluded.updated_at`,
    ).run(this.tenant, key, agent, this.conn.now());
  }

  async conversationSetting(key: string, name: string): Promise<string | undefined> {
    const row = this.sql("SELECT value FROM antler_conversation_settings WHERE tenant = ? AND key = ? AND name = ?").get(
      this.tenant,
      key,
      name,
    ) as { value: string } | undefined;
    return row?.value;
  }

  async setConversationSetting(key: string, name: string, value: string | undefined): Promise<void> {
    if (value === undefined) {
      this.sql("DELETE FROM antler_conversation_settings WHERE tenant = ? AND key = ? AND name = ?").run(this.tenant, key, name);
      return;
    }
    this.sql(
      `INSERT INTO antler_conversation_settings (tenant, key, name, value, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (tenant, key, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    ).run(this.tenant, key, name, value, this.conn.now());
  }

  async setPending(q: PendingQuestion): Promise<void> {
    this.sql(
      `INSERT INTO antler_pending (tenant, thread_id, key, question_id, interrupt_id, question, options, kind, posted, created_at, asked_by, approval)
         VALUES (@tenant, @threadId, @key, @questionId, @interruptId, @question, @options, @kind, @posted, @createdAt, @askedBy, @approval)
         ON CONFLICT (tenant, thread_id) DO UPDATE SET key = excluded.key, question_id = excluded.question_id,
           interrupt_id = excluded.interrupt_id, question = excluded.question, options = excluded.options,
           kind = excluded.kind, posted = excluded.posted, created_at = excluded.created_at,
           asked_by = excluded.asked_by, approval = excluded.approval`,
    ).run({
      ...q,
      tenant: this.tenant,
      options: JSON.stringify(q.options),
      kind: q.kind ?? null,
      posted: q.posted === undefined ? null : JSON.stringify(q.posted),
      askedBy: q.askedBy === undefined ? null : JSON.stringify(q.askedBy),
      approval: q.approval === undefined ? null : JSON.stringify(q.approval),
    });
  }

  async pendingApprovals(): Promise<PendingQuestion[]> {
    const rows = this.sql("SELECT * FROM antler_pending WHERE tenant = ? AND approval IS NOT NULL ORDER BY created_at").all(
      this.tenant,
    ) as PendingRow[];
    return rows.map(toPending);
  }

  async getPending(threadId: string): Promise<PendingQuestion | undefined> {
    const row = this.sql("SELECT * FROM antler_pending WHERE tenant = ? AND thread_id = ?").get(this.tenant, threadId) as
      | PendingRow
      | undefined;
    return row && toPending(row);
  }

  async findPendingByQuestionId(questionId: string): Promise<PendingQuestion | undefined> {
    const row = this.sql("SELECT * FROM antler_pending WHERE tenant = ? AND question_id = ?").get(this.tenant, questionId) as
      | PendingRow
      | undefined;
    return row && toPending(row);
  }

  async clearPending(threadId: string): Promise<void> {
    this.sql("DELETE FROM antler_pending WHERE tenant = ? AND thread_id = ?").run(this.tenant, threadId);
  }

  async recordInbound(entry: { channel: string; eventId: string; key: string; payload: Json }): Promise<boolean> {
    const at = this.conn.now();
    const result = this.sql(
      `INSERT INTO antler_inbox (tenant, channel, event_id, key, state, payload, received_at, updated_at)
         VALUES (?, ?, ?, ?, 'received', ?, ?, ?) ON CONFLICT (tenant, channel, event_id) DO NOTHING`,
    ).run(this.tenant, entry.channel, entry.eventId, entry.key, JSON.stringify(entry.payload), at, at);
    return result.changes === 1;
  }

  async setInboxState(channel: string, eventId: string, state: InboxState, error?: string): Promise<void> {
    this.sql(
      "UPDATE antler_inbox SET state = ?, error = ?, updated_at = ? WHERE tenant = ? AND channel = ? AND event_id = ?",
    ).run(state, error ?? null, this.conn.now(), this.tenant, channel, eventId);
  }

  async getInbound(channel: string, eventId: string): Promise<InboxEntry | undefined> {
    const row = this.sql("SELECT * FROM antler_inbox WHERE tenant = ? AND channel = ? AND event_id = ?").get(
      this.tenant,
      channel,
      eventId,
    ) as InboxRow | undefined;
    return row && toInbox(row);
  }

  async unfinished(): Promise<InboxEntry[]> {
    const rows = this.sql(
      "SELECT * FROM antler_inbox WHERE tenant = ? AND state IN ('received', 'running') ORDER BY received_at, rowid",
    ).all(this.tenant) as InboxRow[];
    return rows.map(toInbox);
  }

  async pruneInbox(before: number): Promise<number> {
    return this.sql("DELETE FROM antler_inbox WHERE tenant = ? AND state IN ('done', 'failed') AND received_at < ?").run(
      this.tenant,
      before,
    ).changes;
  }

  async lastInbound(key: string): Promise<InboxEntry | undefined> {
    const row = this.sql(
      "SELECT * FROM antler_inbox WHERE tenant = ? AND key = ? ORDER BY received_at DESC, rowid DESC LIMIT 1",
    ).get(this.tenant, key) as InboxRow | undefined;
    return row && toInbox(row);
  }

  async close(): Promise<void> {}
}

/** The store of the default tenant; it owns the file, and closing it closes every view too. */
export class SqliteBindingStore extends SqliteTenantStore {
  /**
   * Opens (creating or migrating if needed) the store in `file`; `:memory:` works for tests.
   * `synchronous` is SQLite's setting (see `storage.synchronous`).
   */
  constructor(file: string, now: () => number = Date.now, synchronous: Synchronous = "normal") {
    if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
    const db = openDatabase(file, synchronous);
    try {
      migrate(db, now());
    } catch (err) {
      db.close();
      throw err;
    }
    super({ db, statements: new Map(), now }, DEFAULT_TENANT);
  }

  override async close(): Promise<void> {
    if (this.conn.db.open) this.conn.db.close();
  }
}

function toBinding(row: ThreadRow): ThreadBinding {
  return bindingOf({ ...row, current: row.current === 1 });
}

function toPending(row: PendingRow): PendingQuestion {
  const json = <T>(text: string | null): T | null => (text ? (JSON.parse(text) as T) : null);
  return pendingOf({
    ...row,
    options: JSON.parse(row.options) as string[],
    posted: json<Json>(row.posted),
    asked_by: json<NonNullable<PendingQuestion["askedBy"]>>(row.asked_by),
    approval: json<Json>(row.approval),
  });
}

function toInbox(row: InboxRow): InboxEntry {
  return inboxOf({ ...row, payload: JSON.parse(row.payload) as Json });
}
