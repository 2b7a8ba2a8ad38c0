/**
 * Conversation leases: one replica at a time runs a conversation's messages (its lease in
 * `antler_conversation_leases`), so they run in order whichever replica received them. The lease
 * is renewed with the heartbeat and given up when the work ends; a holder that could not renew
 * in time, or whose lease another replica took, is told through an abort signal.
 */
import type { Broadcasts } from "./broadcasts.js";
import type { ReplicaContext } from "./context.js";
import { leaseHoldsUntil } from "./timing.js";

/** The broadcast that says a conversation's lease was given up. */
const FREE = "free";

/** A conversation lease held now. */
interface Held {
  /** When (local clock) the winning request was sent. */
  acquired: number;
  /** Until when (local clock) the last renewal holds. */
  until: number;
  /** Tells the work its lease is gone. */
  lost: AbortController;
}

export class ConversationLeases {
  /** Leases held now, by tenant and key. */
  private readonly held = new Map<string, Held>();
  /** Conversations this process works on, so two local works on one key never run at once. */
  private readonly local = new Map<string, Promise<unknown>>();

  constructor(
    private readonly context: ReplicaContext,
    private readonly broadcasts: Broadcasts,
  ) {}

  /**
   * Runs `work` while this replica holds the conversation's lease: waits while another replica
   * holds it, keeps it renewed with the heartbeat, and gives it up when `work` ends. `lost` aborts
   * when the lease could not be renewed in time or another replica took it: the work should then
   * start nothing new in the conversation.
   */
  withConversation<T>(tenant: string, key: string, work: (lost: AbortSignal) => Promise<T>): Promise<T> {
    const slot = `${tenant}\u0000${key}`;
    const prior = this.local.get(slot) ?? Promise.resolve();
    const run = prior
      .catch(() => undefined)
      .then(async () => {
        const acquired = await this.acquire(tenant, key);
        const held = { acquired, until: leaseHoldsUntil(acquired, this.context.timing), lost: new AbortController() };
        this.held.set(slot, held);
        try {
          return await work(held.lost.signal);
        } finally {
          this.held.delete(slot);
          await this.release(tenant, key);
        }
      });
    this.local.set(slot, run);
    // The caller handles a failure; this copy of it must not end the process as an unhandled rejection.
    void run
      .finally(() => {
        if (this.local.get(slot) === run) this.local.delete(slot);
      })
      .catch(() => undefined);
    return run;
  }

  /** Whether another live replica holds the conversation's lease now. */
  async heldElsewhere(tenant: string, key: string): Promise<boolean> {
    const { rows } = await this.context.pool.query(
      "SELECT 1 FROM antler_conversation_leases WHERE tenant = $1 AND key = $2 AND replica <> $3 AND expires_at > now()",
      [tenant, key, this.context.id],
    );
    return rows.length > 0;
  }

  /** The tenants of the conversations whose leases this replica holds now. */
  heldTenants(): string[] {
    return [...new Set([...this.held.keys()].map((slot) => slot.slice(0, slot.indexOf("\u0000"))))];
  }

  /**
   * The heartbeat's part: renews every lease this replica holds, in a request sent at `asked`. A
   * lease not renewed that was acquired before the request is another replica's now.
   */
  async renew(asked: number): Promise<void> {
    const { pool, id, timing } = this.context;
    const { rows } = await pool.query<{ tenant: string; key: string }>(
      `UPDATE antler_conversation_leases SET expires_at = now() + $2 * interval '1 millisecond'
       WHERE replica = $1 RETURNING tenant, key`,
      [id, timing.leaseMs],
    );
    const renewed = new Set(rows.map((r) => `${r.tenant}\u0000${r.key}`));
    for (const [slot, held] of this.held) {
      // Counted from before the request, and a little early, like a channel's lease.
      if (renewed.has(slot)) held.until = leaseHoldsUntil(asked, timing);
      else if (held.acquired < asked) held.lost.abort(); // another replica has it now
    }
  }

  /** Tells the work of every lease whose last renewal has run out by `now` that it is gone. */
  expire(now: number): void {
    for (const held of this.held.values()) if (now >= held.until) held.lost.abort();
  }

  /** Gives up every conversation lease this replica holds (a clean stop). */
  async close(): Promise<void> {
    await this.context.pool.query("DELETE FROM antler_conversation_leases WHERE replica = $1", [this.context.id]);
  }

  /** Waits for the conversation's lease; resolves to when (local clock) the winning request was sent. */
  private async acquire(tenant: string, key: string): Promise<number> {
    const { pool, id, timing } = this.context;
    for (let wait = 50; ; wait = Math.min(500, wait * 2)) {
      if (this.context.closed()) throw new Error("the replica is shutting down");
      const asked = Date.now();
      const { rows } = await pool.query(
        `INSERT INTO antler_conversation_leases (tenant, key, replica, expires_at)
           VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
         ON CONFLICT (tenant, key) DO UPDATE SET replica = EXCLUDED.replica, expires_at = EXCLUDED.expires_at
         WHERE antler_conversation_leases.expires_at < now() OR antler_conversation_leases.replica = EXCLUDED.replica
         RETURNING replica`,
        [tenant, key, id, timing.leaseMs],
      );
      if (rows.length > 0) return asked;
      // Woken early when the holder says it is done; else tried again after a growing wait.
      await this.broadcasts.until(FREE, (data) => (data as { key?: string }).key === key, wait);
    }
  }

  /** Gives the conversation's lease up when its work ended, and tells the replicas waiting for it. */
  private async release(tenant: string, key: string): Promise<void> {
    await this.context.pool
      .query("DELETE FROM antler_conversation_leases WHERE tenant = $1 AND key = $2 AND replica = $3", [
        tenant,
        key,
        this.context.id,
      ])
      .catch((err: unknown) => this.context.logger.warn({ err, key }, "could not give up a conversation lease"));
    await this.broadcasts.broadcast(FREE, { tenant, key }).catch(() => undefined);
  }
}
