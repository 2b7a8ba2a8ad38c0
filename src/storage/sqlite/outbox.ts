/**
 * The outbox on SQLite (see src/bindings/outbox.ts), as the base of a tenant's store: the open
 * file and compiled statements it shares with the rest of the store live here too.
 *
 * One process owns the file and better-sqlite3 is synchronous, so a claim is a SELECT and its
 * UPDATEs in one IMMEDIATE transaction: nothing else runs in between, in this process or (by the
 * write lock) any other that opened the file.
 */
import type Database from "better-sqlite3";
import type { NewOutboxEntry, OutboxEntry, OutboxFilter, OutboxUpdate } from "../../bindings/outbox.js";
import { OUTBOX_COLUMNS, type OutboxRecord, outboxAssignments, outboxOf } from "../../bindings/rows-outbox.js";
import type { Json } from "../../bindings/types.js";

/** The open file, shared by a store and all its tenant views. */
export interface Connection {
  db: Database.Database;
  /** Each statement is compiled once: every message goes through several of them. */
  statements: Map<string, Database.Statement>;
  now: () => number;
}

/** An outbox row as SQLite returns it: JSON as text. */
type OutboxRow = Omit<OutboxRecord, "payload" | "progress" | "result"> & {
  payload: string;
  progress: string | null;
  result: string | null;
};

/** The oldest unfinished entry of each conversation, when it may be claimed at `@now`. */
const CLAIMABLE = `
  SELECT o.id FROM antler_outbox o
  WHERE o.tenant = @tenant AND o.channel IN (SELECT value FROM json_each(@channels))
    AND ((o.state = 'queued' AND o.next_attempt_at <= @now) OR (o.state IN ('sending', 'running') AND o.lease_until < @now))
    AND NOT EXISTS (SELECT 1 FROM antler_outbox p
      WHERE p.tenant = o.tenant AND p.channel = o.channel AND p.key = o.key AND p.seq < o.seq
        AND p.state NOT IN ('sent', 'failed'))
  ORDER BY o.seq LIMIT @limit`;

/** One tenant's outbox; the rest of the store builds on it. */
export abstract class SqliteOutboxStore {
  constructor(
    protected readonly conn: Connection,
    readonly tenant: string,
  ) {}

  protected sql(text: string): Database.Statement {
    let statement = this.conn.statements.get(text);
    if (!statement) {
      statement = this.conn.db.prepare(text);
      this.conn.statements.set(text, statement);
    }
    return statement;
  }

  /** Runs `work` in one IMMEDIATE transaction (it takes the write lock first). */
  protected transaction<T>(work: () => T): T {
    return this.conn.db.transaction(work).immediate();
  }

  /** Writes the entry, or finds the one stored under its key; runs inside a caller's transaction too. */
  protected enqueue(entry: NewOutboxEntry): { entry: OutboxEntry; created: boolean } {
    const at = this.conn.now();
    const inserted = this.sql(
      `INSERT INTO antler_outbox (tenant, seq, ${OUTBOX_COLUMNS})
         VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM antler_outbox), ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?,
           NULL, NULL, NULL, NULL, NULL, NULL, ?, ?, NULL)
         ON CONFLICT DO NOTHING RETURNING ${OUTBOX_COLUMNS}`,
    ).get(
      this.tenant,
      entry.id,
      entry.idempotencyKey,
      entry.bodyHash,
      entry.kind,
      entry.channel,
      entry.key,
      JSON.stringify(entry.payload),
      entry.source,
      entry.notBefore ?? at,
      at,
      at,
    ) as OutboxRow | undefined;
    if (inserted) return { entry: toOutbox(inserted), created: true };
    const found = this.outboxRow("idempotency_key", entry.idempotencyKey);
    if (!found) throw new Error(`[antler] [bindings] outbox id ${entry.id} is already taken by another idempotency key`);
    return { entry: found, created: false };
  }

  private outboxRow(column: "id" | "idempotency_key", value: string): OutboxEntry | undefined {
    const row = this.sql(`SELECT ${OUTBOX_COLUMNS} FROM antler_outbox WHERE tenant = ? AND ${column} = ?`).get(
      this.tenant,
      value,
    ) as OutboxRow | undefined;
    return row && toOutbox(row);
  }

  async enqueueOutbound(entry: NewOutboxEntry): Promise<{ entry: OutboxEntry; created: boolean }> {
    return this.transaction(() => this.enqueue(entry));
  }

  async getOutbound(id: string): Promise<OutboxEntry | undefined> {
    return this.outboxRow("id", id);
  }

  async getOutboundByKey(idempotencyKey: string): Promise<OutboxEntry | undefined> {
    return this.outboxRow("idempotency_key", idempotencyKey);
  }

  async claimOutbound(owner: string, channels: string[], now: number, leaseMs: number, limit: number): Promise<OutboxEntry[]> {
    if (channels.length === 0 || limit <= 0) return [];
    return this.transaction(() => {
      const ids = this.sql(CLAIMABLE)
        .pluck()
        .all({ tenant: this.tenant, channels: JSON.stringify(channels), now, limit }) as string[];
      const claim = this.sql(
        `UPDATE antler_outbox SET state = CASE WHEN state = 'running' THEN 'running' ELSE 'sending' END,
           owner = ?, lease_until = ?, updated_at = ? WHERE tenant = ? AND id = ? RETURNING ${OUTBOX_COLUMNS}`,
      );
      return ids.map((id) => toOutbox(claim.get(owner, now + leaseMs, this.conn.now(), this.tenant, id) as OutboxRow));
    });
  }

  async updateOutbound(id: string, owner: string, update: OutboxUpdate): Promise<boolean> {
    const set = [...outboxAssignments(update), ["updated_at", this.conn.now()] as const];
    const result = this.sql(
      `UPDATE antler_outbox SET ${set.map(([column]) => `${column} = ?`).join(", ")}
         WHERE tenant = ? AND id = ? AND owner = ? AND state IN ('sending', 'running')`,
    ).run(...set.map(([, value]) => value), this.tenant, id, owner);
    return result.changes === 1;
  }

  async listOutbound(filter: OutboxFilter = {}): Promise<OutboxEntry[]> {
    const rows = this.sql(
      `SELECT ${OUTBOX_COLUMNS} FROM antler_outbox WHERE tenant = @tenant AND (@state IS NULL OR state = @state)
         AND (@channel IS NULL OR channel = @channel) AND (@source IS NULL OR source = @source)
         ORDER BY seq DESC LIMIT @limit`,
    ).all({
      tenant: this.tenant,
      state: filter.state ?? null,
      channel: filter.channel ?? null,
      source: filter.source ?? null,
      limit: filter.limit ?? 100,
    }) as OutboxRow[];
    return rows.map(toOutbox);
  }

  async pruneOutbox(before: number): Promise<number> {
    return this.sql("DELETE FROM antler_outbox WHERE tenant = ? AND state IN ('sent', 'failed') AND updated_at < ?").run(
      this.tenant,
      before,
    ).changes;
  }
}

function toOutbox(row: OutboxRow): OutboxEntry {
  const json = (text: string | null): Json | null => (text === null ? null : (JSON.parse(text) as Json));
  return outboxOf({ ...row, payload: JSON.parse(row.payload) as Json, progress: json(row.progress), result: json(row.result) });
}
