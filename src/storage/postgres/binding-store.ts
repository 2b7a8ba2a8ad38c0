/**
 * BindingStore on PostgreSQL, shared by several gateway replicas. Each store is opened for one
 * replica, which it records as the owner of every event it records or claims; the replica
 * methods (`claimInbound`, `nextReceived`, `takeOver`) are single statements whose row locks
 * make them safe between replicas.
 *
 * Tenants: row-level security keeps them apart (see schema.ts), and each tenant view has
 * its own small pool whose connections open with `antler.tenant` set to that tenant. Fixing the
 * tenant when a connection opens means no statement can run under a missing or stale tenant, and
 * every call stays one round trip; `SET LOCAL` would need a transaction (three round trips) around
 * each. The statements still name the tenant, so the indexes serve them.
 *
 * The outbox and the schedules are in outbox.ts and schedules.ts, which this class builds on.
 */
import { type BindingRecord, bindingOf, type InboxRecord, inboxOf, type PendingRecord, pendingOf } from "../../bindings/rows.js";
import {
  type BindingStore,
  DEFAULT_TENANT,
  type InboxEntry,
  type InboxState,
  type Json,
  type PendingQuestion,
  type ThreadBinding,
} from "../../bindings/types.js";
import { migrate, type PostgresConnection, whereIs } from "../postgres.js";
import { PostgresScheduleStore } from "./schedules.js";
import { SCHEMA_NAME, STEPS } from "./schema.js";

export interface PostgresBindingStoreOptions {
  /** The database (URL and pool size); each tenant gets a pool of this size. */
  connection: PostgresConnection;
  /** The gateway replica this store works for, recorded as the owner of its events. */
  replica: string;
  /** The clock every stored time comes from (ms); tests move it. */
  now?: () => number;
}

/** Rows as pg returns them: bigint columns come as strings, jsonb already decoded. */
type ThreadRow = Omit<BindingRecord, "created_at"> & { created_at: string };
type PendingRow = Omit<PendingRecord, "created_at"> & { created_at: string };
type InboxRow = Omit<InboxRecord, "payload" | "received_at" | "updated_at"> & {
  payload: string;
  received_at: string;
  updated_at: string;
};

const THREAD_COLUMNS = "key, thread_id, agent, created_at, current";
const PENDING_COLUMNS =
  "thread_id, key, question_id, interrupt_id, question, options, kind, posted, created_at, asked_by, approval";
const INBOX_COLUMNS = "channel, event_id, key, state, payload, received_at, updated_at, error, owner";
const UNFINISHED = "state IN ('received', 'running')";

/** Second key of the advisory lock that serializes `bindThread` per conversation (first: the key's hash). */
const BIND_LOCK = 0x62696e64; // "bind"

/** One tenant's rows. `PostgresBindingStore` is the default tenant's and owns the pools. */
class PostgresTenantStore extends PostgresScheduleStore implements BindingStore {
  get replica(): string {
    return this.shared.replica;
  }

  forTenant(tenant: string): BindingStore {
    return new PostgresTenantStore(this.shared, tenant);
  }

  async currentThread(key: string): Promise<string | undefined> {
    return (await this.currentBinding(key))?.threadId;
  }

  async currentBinding(key: string): Promise<ThreadBinding | undefined> {
    const [row] = await this.rows<ThreadRow>(
      `SELECT ${THREAD_COLUMNS} FROM antler_threads WHERE tenant = $1 AND key = $2 AND current`,
      [this.tenant, key],
    );
    return row && toBinding(row);
  }

  async bindThread(key: string, threadId: string, agent?: string): Promise<void> {
    const client = await this.pool().connect();
    try {
      await client.query("BEGIN");
      // Two replicas binding one conversation at once take turns, so one current thread remains.
      await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [BIND_LOCK, JSON.stringify([this.tenant, key])]);
      await client.query("UPDATE antler_threads SET current = false WHERE tenant = $1 AND key = $2 AND current", [
        this.tenant,
        key,
      ]);
      await client.query(
        `INSERT INTO antler_threads (tenant, key, thread_id, agent, created_at, current) VALUES ($1, $2, $3, $4, $5, true)
           ON CONFLICT (tenant, key, thread_id) DO UPDATE SET current = true, agent = COALESCE(excluded.agent, antler_threads.agent)`,
        [this.tenant, key, threadId, agent ?? null, this.shared.now()],
      );
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async threadHistory(key: string): Promise<ThreadBinding[]> {
    const rows = await this.rows<ThreadRow>(
      `SELECT ${THREAD_COLUMNS} FROM antler_threads WHERE tenant = $1 AND key = $2 ORDER BY created_at DESC, seq DESC`,
      [this.tenant, key],
    );
    return rows.map(toBinding);
  }

  async chosenAgent(key: string): Promise<string | undefined> {
    const [row] = await this.rows<{ agent: string }>("SELECT agent FROM antler_agent_choice WHERE tenant = $1 AND key = $2", [
      this.tenant,
      key,
    ]);
    return row?.agent;
  }

  async setChosenAgent(key: string, agent: string | undefined): Promise<void> {
    if (agent === undefined) {
      await this.rows("DELETE FROM antler_agent_choice WHERE tenant = $1 AND key = $2", [this.tenant, key]);
      return;
    }
    await this.rows(
      `INSERT INTO antler_agent_choice (tenant, key, agent, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (tenant, key) DO UPDATE SET agent = excluded.agent, updated_at = excluded.updated_at`,
      [this.tenant, key, agent, this.shared.now()],
    );
  }

  async conversationSetting(key: string, name: string): Promise<string | undefined> {
    const [row] = await this.rows<{ value: string }>(
      "SELECT value FROM antler_conversation_settings WHERE tenant = $1 AND key = $2 AND name = $3",
      [this.tenant, key, name],
    );
    return row?.value;
  }

  async setConversationSetting(key: string, name: string, value: string | undefined): Promise<void> {
    if (value === undefined) {
      await this.rows("DELETE FROM antler_conversation_settings WHERE tenant = $1 AND key = $2 AND name = $3", [
        this.tenant,
        key,
        name,
      ]);
      return;
    }
    await this.rows(
      `INSERT INTO antler_conversation_settings (tenant, key, name, value, updated_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (tenant, key, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      [this.tenant, key, name, value, this.shared.now()],
    );
  }

  async setPending(q: PendingQuestion): Promise<void> {
    const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
    await this.rows(
      `INSERT INTO antler_pending (tenant, ${PENDING_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (tenant, thread_id) DO UPDATE SET key = excluded.key, question_id = excluded.question_id,
           interrupt_id = excluded.interrupt_id, question = excluded.question, options = excluded.options,
           kind = excluded.kind, posted = excluded.posted, created_at = excluded.created_at,
           asked_by = excluded.asked_by, approval = excluded.approval`,
      [
        this.tenant,
        q.threadId,
        q.key,
        q.questionId,
        q.interruptId,
        q.question,
        JSON.stringify(q.options),
        q.kind ?? null,
        json(q.posted),
        q.createdAt,
        json(q.askedBy),
        json(q.approval),
      ],
    );
  }

  async pendingApprovals(): Promise<PendingQuestion[]> {
    const rows = await this.rows<PendingRow>(
      `SELECT ${PENDING_COLUMNS} FROM antler_pending WHERE tenant = $1 AND approval IS NOT NULL ORDER BY created_at, seq`,
      [this.tenant],
    );
    return rows.map(toPending);
  }

  async getPending(threadId: string): Promise<PendingQuestion | undefined> {
    const [row] = await this.rows<PendingRow>(
      `SELECT ${PENDING_COLUMNS} FROM antler_pending WHERE tenant = $1 AND thread_id = $2`,
      [this.tenant, threadId],
    );
    return row && toPending(row);
  }

  async findPendingByQuestionId(questionId: string): Promise<PendingQuestion | undefined> {
    const [row] = await this.rows<PendingRow>(
      `SELECT ${PENDING_COLUMNS} FROM antler_pending WHERE tenant = $1 AND question_id = $2`,
      [this.tenant, questionId],
    );
    return row && toPending(row);
  }

  async clearPending(threadId: string): Promise<void> {
    await this.rows("DELETE FROM antler_pending WHERE tenant = $1 AND thread_id = $2", [this.tenant, threadId]);
  }

  async recordInbound(entry: { channel: string; eventId: string; key: string; payload: Json }): Promise<boolean> {
    const at = this.shared.now();
    // The primary key makes this exactly-once across replicas: one insert wins, the rest do nothing.
    const result = await this.pool().query(
      `INSERT INTO antler_inbox (tenant, channel, event_id, key, state, payload, received_at, updated_at, owner)
         VALUES ($1, $2, $3, $4, 'received', $5, $6, $6, $7) ON CONFLICT (tenant, channel, event_id) DO NOTHING`,
      [this.tenant, entry.channel, entry.eventId, entry.key, JSON.stringify(entry.payload), at, this.replica],
    );
    return result.rowCount === 1;
  }

  async setInboxState(channel: string, eventId: string, state: InboxState, error?: string): Promise<void> {
    await this.rows(
      "UPDATE antler_inbox SET state = $1, error = $2, updated_at = $3 WHERE tenant = $4 AND channel = $5 AND event_id = $6",
      [state, error ?? null, this.shared.now(), this.tenant, channel, eventId],
    );
  }

  async getInbound(channel: string, eventId: string): Promise<InboxEntry | undefined> {
    const [row] = await this.rows<InboxRow>(
      `SELECT ${INBOX_COLUMNS} FROM antler_inbox WHERE tenant = $1 AND channel = $2 AND event_id = $3`,
      [this.tenant, channel, eventId],
    );
    return row && toInbox(row);
  }

  async unfinished(): Promise<InboxEntry[]> {
    const rows = await this.rows<InboxRow>(
      `SELECT ${INBOX_COLUMNS} FROM antler_inbox WHERE tenant = $1 AND ${UNFINISHED} ORDER BY received_at, seq`,
      [this.tenant],
    );
    return rows.map(toInbox);
  }

  async lastInbound(key: string): Promise<InboxEntry | undefined> {
    const [row] = await this.rows<InboxRow>(
      `SELECT ${INBOX_COLUMNS} FROM antler_inbox WHERE tenant = $1 AND key = $2 ORDER BY received_at DESC, seq DESC LIMIT 1`,
      [this.tenant, key],
    );
    return row && toInbox(row);
  }

  async unfinishedOwners(): Promise<string[]> {
    const rows = await this.rows<{ owner: string }>(
      `SELECT DISTINCT owner FROM antler_inbox WHERE tenant = $1 AND owner IS NOT NULL AND ${UNFINISHED}`,
      [this.tenant],
    );
    return rows.map((r) => r.owner);
  }

  async pruneInbox(before: number): Promise<number> {
    const result = await this.pool().query(
      "DELETE FROM antler_inbox WHERE tenant = $1 AND state IN ('done', 'failed') AND received_at < $2",
      [this.tenant, before],
    );
    return result.rowCount ?? 0;
  }

  async claimInbound(channel: string, eventId: string): Promise<boolean> {
    // A compare-and-set: a second claimer waits for the first's row lock, then finds it running.
    const result = await this.pool().query(
      `UPDATE antler_inbox SET state = 'running', owner = $1, updated_at = $2
         WHERE tenant = $3 AND channel = $4 AND event_id = $5 AND state = 'received'`,
      [this.replica, this.shared.now(), this.tenant, channel, eventId],
    );
    return result.rowCount === 1;
  }

  async nextReceived(key: string): Promise<{ next: InboxEntry; before: InboxEntry[] } | undefined> {
    // The oldest waiting event, and the events recorded before it that are still running.
    const rows = await this.rows<InboxRow>(
      `WITH first AS (
         SELECT min(seq) AS seq FROM antler_inbox WHERE tenant = $1 AND key = $2 AND state = 'received')
       SELECT ${INBOX_COLUMNS} FROM antler_inbox, first
         WHERE tenant = $1 AND key = $2 AND ${UNFINISHED} AND antler_inbox.seq <= first.seq
         ORDER BY antler_inbox.seq`,
      [this.tenant, key],
    );
    const entries = rows.map(toInbox);
    const next = entries.pop();
    return next && { next, before: entries };
  }

  async takeOver(from: string[], channels: string[]): Promise<InboxEntry[]> {
    // One UPDATE: a replica that meets a row another has just moved re-reads it, finds a new
    // owner outside `from`, and leaves it; so each event moves once.
    const rows = await this.rows<InboxRow>(
      `WITH moved AS (
         UPDATE antler_inbox SET owner = $1, updated_at = $2
           WHERE tenant = $3 AND owner = ANY($4::text[]) AND channel = ANY($5::text[]) AND ${UNFINISHED}
           RETURNING ${INBOX_COLUMNS}, seq)
       SELECT ${INBOX_COLUMNS} FROM moved ORDER BY received_at, seq`,
      [this.replica, this.shared.now(), this.tenant, from, channels],
    );
    return rows.map(toInbox);
  }

  async close(): Promise<void> {}
}

/** The store of the default tenant; it owns every tenant's pool, and closing it closes them all. */
export class PostgresBindingStore extends PostgresTenantStore {
  private constructor(options: PostgresBindingStoreOptions) {
    super(
      { connection: options.connection, replica: options.replica, now: options.now ?? Date.now, pools: new Map(), closed: false },
      DEFAULT_TENANT,
    );
  }

  /** Opens the store, creating or migrating its tables first (safe when several replicas start at once). */
  static async open(options: PostgresBindingStoreOptions): Promise<PostgresBindingStore> {
    const store = new PostgresBindingStore(options);
    try {
      await migrate(store.pool(), SCHEMA_NAME, STEPS, store.shared.now());
    } catch (err) {
      await store.close();
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(`[antler] [postgres] cannot open the binding store at ${whereIs(options.connection.url)}: ${reason}`, {
        cause: err,
      });
    }
    return store;
  }

  /**
   * True when the database role skips row-level security (a superuser, or BYPASSRLS): tenants'
   * rows are then kept apart only by Antler's own statements.
   */
  async rowSecurityBypassed(): Promise<boolean> {
    const rows = await this.rows<{ bypass: boolean }>(
      "SELECT rolsuper OR rolbypassrls AS bypass FROM pg_roles WHERE rolname = current_user",
      [],
    );
    return rows[0]?.bypass === true;
  }

  /** How many connections ordinary roles may open on the server: `max_connections` less the superusers' reserve. */
  async connectionLimit(): Promise<number> {
    const [row] = await this.rows<{ available: number }>(
      "SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int AS available",
      [],
    );
    return Number(row?.available ?? 0);
  }

  override async close(): Promise<void> {
    if (this.shared.closed) return;
    this.shared.closed = true;
    const pools = [...this.shared.pools.values()];
    this.shared.pools.clear();
    await Promise.all(pools.map((pool) => pool.end()));
  }
}

function toBinding(row: ThreadRow): ThreadBinding {
  return bindingOf({ ...row, created_at: Number(row.created_at) });
}

function toPending(row: PendingRow): PendingQuestion {
  return pendingOf({ ...row, created_at: Number(row.created_at) });
}

function toInbox(row: InboxRow): InboxEntry {
  return inboxOf({
    ...row,
    payload: JSON.parse(row.payload) as Json,
    received_at: Number(row.received_at),
    updated_at: Number(row.updated_at),
  });
}
