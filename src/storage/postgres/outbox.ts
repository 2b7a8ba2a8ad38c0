/**
 * The outbox on PostgreSQL (see src/bindings/outbox.ts), as the base of a tenant's store: the
 * tenant's pool, shared with the rest of the store, lives here too.
 *
 * A claim is one statement: it picks each conversation's oldest unfinished entry when that one
 * may go, locks the picked rows `FOR UPDATE SKIP LOCKED` and marks them in the same statement.
 * Replicas claiming at once skip each other's locked rows, and a row another has just claimed no
 * longer passes the check when it is read again, so each entry goes to one claimer. An entry's
 * younger siblings wait while it is unfinished in the claimer's view, whoever holds it.
 */
import type pg from "pg";
import type { NewOutboxEntry, OutboxEntry, OutboxFilter, OutboxUpdate } from "../../bindings/outbox.js";
import { OUTBOX_COLUMNS, type OutboxRecord, outboxAssignments, outboxOf } from "../../bindings/rows-outbox.js";
import { openPool, type PostgresConnection } from "../postgres.js";

/** What a store and all its tenant views share. */
export interface Shared {
  connection: PostgresConnection;
  replica: string;
  now: () => number;
  pools: Map<string, pg.Pool>;
  closed: boolean;
}

/** A pool, or one of its connections inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

/** An outbox row as pg returns it: bigint columns as strings, json decoded. */
type OutboxRow = Omit<OutboxRecord, "next_attempt_at" | "lease_until" | "created_at" | "updated_at" | "sent_at"> & {
  next_attempt_at: string;
  lease_until: string | null;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
};

const CLAIM = `
WITH claimable AS (
  SELECT o.tenant, o.id FROM antler_outbox o
  WHERE o.tenant = $1 AND o.channel = ANY($2::text[])
    AND ((o.state = 'queued' AND o.next_attempt_at <= $3) OR (o.state IN ('sending', 'running') AND o.lease_until < $3))
    AND NOT EXISTS (SELECT 1 FROM antler_outbox p
      WHERE p.tenant = o.tenant AND p.channel = o.channel AND p.key = o.key AND p.seq < o.seq
        AND p.state NOT IN ('sent', 'failed'))
  ORDER BY o.seq LIMIT $4
  FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE antler_outbox t SET state = CASE WHEN t.state = 'running' THEN 'running' ELSE 'sending' END,
    owner = $5, lease_until = $6, updated_at = $7
  FROM claimable c WHERE t.tenant = c.tenant AND t.id = c.id
  RETURNING t.seq, ${OUTBOX_COLUMNS.split(", ")
    .map((c) => `t.${c}`)
    .join(", ")}
)
SELECT ${OUTBOX_COLUMNS} FROM claimed ORDER BY seq`;

/** One tenant's outbox; the rest of the store builds on it. */
export abstract class PostgresOutboxStore {
  constructor(
    protected readonly shared: Shared,
    readonly tenant: string,
  ) {}

  /** This tenant's pool, opened on first use. */
  protected pool(): pg.Pool {
    if (this.shared.closed) throw new Error("[antler] [postgres] the binding store is closed");
    let pool = this.shared.pools.get(this.tenant);
    if (!pool) {
      pool = openPool(this.shared.connection, this.tenant);
      this.shared.pools.set(this.tenant, pool);
    }
    return pool;
  }

  protected async rows<T extends pg.QueryResultRow>(text: string, values: unknown[], db: Queryable = this.pool()): Promise<T[]> {
    return (await db.query<T>(text, values)).rows;
  }

  /** Runs `work` in one transaction on one connection; undefined from `work` rolls it back. */
  protected async transaction<T>(work: (client: pg.PoolClient) => Promise<T | undefined>): Promise<T | undefined> {
    const client = await this.pool().connect();
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query(result === undefined ? "ROLLBACK" : "COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * Writes the entry, or finds the one stored under its key. A replica writing the same key at
   * once waits for the first insert's transaction, then finds its row.
   */
  protected async enqueue(db: Queryable, entry: NewOutboxEntry): Promise<{ entry: OutboxEntry; created: boolean }> {
    const at = this.shared.now();
    const [inserted] = await this.rows<OutboxRow>(
      `INSERT INTO antler_outbox (tenant, ${OUTBOX_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'queued', 0, $10, NULL, NULL, NULL, NULL, NULL, NULL, $11, $11, NULL)
         ON CONFLICT DO NOTHING RETURNING ${OUTBOX_COLUMNS}`,
      [
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
      ],
      db,
    );
    if (inserted) return { entry: toOutbox(inserted), created: true };
    const found = await this.outboxRow("idempotency_key", entry.idempotencyKey, db);
    if (!found) throw new Error(`[antler] [postgres] outbox id ${entry.id} is already taken by another idempotency key`);
    return { entry: found, created: false };
  }

  private async outboxRow(column: "id" | "idempotency_key", value: string, db?: Queryable): Promise<OutboxEntry | undefined> {
    const [row] = await this.rows<OutboxRow>(
      `SELECT ${OUTBOX_COLUMNS} FROM antler_outbox WHERE tenant = $1 AND ${column} = $2`,
      [this.tenant, value],
      db,
    );
    return row && toOutbox(row);
  }

  async enqueueOutbound(entry: NewOutboxEntry): Promise<{ entry: OutboxEntry; created: boolean }> {
    return this.enqueue(this.pool(), entry);
  }

  async getOutbound(id: string): Promise<OutboxEntry | undefined> {
    return this.outboxRow("id", id);
  }

  async getOutboundByKey(idempotencyKey: string): Promise<OutboxEntry | undefined> {
    return this.outboxRow("idempotency_key", idempotencyKey);
  }

  async claimOutbound(owner: string, channels: string[], now: number, leaseMs: number, limit: number): Promise<OutboxEntry[]> {
    if (channels.length === 0 || limit <= 0) return [];
    const rows = await this.rows<OutboxRow>(CLAIM, [this.tenant, channels, now, limit, owner, now + leaseMs, this.shared.now()]);
    return rows.map(toOutbox);
  }

  async updateOutbound(id: string, owner: string, update: OutboxUpdate): Promise<boolean> {
    const set = [...outboxAssignments(update), ["updated_at", this.shared.now()] as const];
    const result = await this.pool().query(
      `UPDATE antler_outbox SET ${set.map(([column], i) => `${column} = $${i + 1}`).join(", ")}
         WHERE tenant = $${set.length + 1} AND id = $${set.length + 2} AND owner = $${set.length + 3}
           AND state IN ('sending', 'running')`,
      [...set.map(([, value]) => value), this.tenant, id, owner],
    );
    return result.rowCount === 1;
  }

  async listOutbound(filter: OutboxFilter = {}): Promise<OutboxEntry[]> {
    const rows = await this.rows<OutboxRow>(
      `SELECT ${OUTBOX_COLUMNS} FROM antler_outbox WHERE tenant = $1 AND ($2::text IS NULL OR state = $2)
         AND ($3::text IS NULL OR channel = $3) AND ($4::text IS NULL OR source = $4) ORDER BY seq DESC LIMIT $5`,
      [this.tenant, filter.state ?? null, filter.channel ?? null, filter.source ?? null, filter.limit ?? 100],
    );
    return rows.map(toOutbox);
  }

  async pruneOutbox(before: number): Promise<number> {
    const result = await this.pool().query(
      "DELETE FROM antler_outbox WHERE tenant = $1 AND state IN ('sent', 'failed') AND updated_at < $2",
      [this.tenant, before],
    );
    return result.rowCount ?? 0;
  }
}

const orNull = (value: string | null): number | null => (value === null ? null : Number(value));

function toOutbox(row: OutboxRow): OutboxEntry {
  return outboxOf({
    ...row,
    next_attempt_at: Number(row.next_attempt_at),
    lease_until: orNull(row.lease_until),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    sent_at: orNull(row.sent_at),
  });
}
