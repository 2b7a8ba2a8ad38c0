/**
 * Conversation leases: one replica at a time runs a conversation's messages. A lease is a row
 * keyed by (tenant, key), taken with the same atomic upsert as channel leases (free, expired or
 * ours), renewed while the work runs and deleted after it. Within one process, calls for the same
 * conversation queue up locally first, because the row only knows replicas, not callers.
 *
 * A waiting replica tries again every `pollMs`, and at once when a release is announced.
 */
import type { Logger } from "../log/logger.js";
import { ClusterError } from "./errors.js";
import type { LeaseContext } from "./leadership.js";
import { abortable, sleep } from "./loop.js";
import { msInterval } from "./replicas.js";
import type { LeasedWork } from "./types.js";

const ACQUIRE = `
INSERT INTO antler_cluster_conversation_leases AS l (tenant, key, replica, acquired_at, expires_at)
VALUES ($2, $3, $4, now(), now() + ${msInterval(1)})
ON CONFLICT (tenant, key) DO UPDATE SET
  replica = EXCLUDED.replica, acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
WHERE l.replica = EXCLUDED.replica OR l.expires_at <= now()
RETURNING replica`;

const RENEW = `
UPDATE antler_cluster_conversation_leases SET expires_at = now() + ${msInterval(1)}
WHERE tenant = $2 AND key = $3 AND replica = $4`;

export interface ConversationTimings {
  ttlMs: number;
  renewMs: number;
  pollMs: number;
}

export class ConversationLeases {
  /** Per conversation, the promise the next local caller waits for. */
  private readonly tails = new Map<string, Promise<void>>();
  /** Per conversation, the wake-ups of local callers waiting for another replica's lease. */
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly keepers = new Set<LeaseKeeper>();
  private stopped = false;

  constructor(
    private readonly ctx: LeaseContext,
    private readonly timings: ConversationTimings,
    private readonly released: (tenant: string, key: string) => void,
  ) {}

  /** Runs `work` while this replica holds the conversation's lease (see `Cluster.withConversation`). */
  async run<T>(tenant: string, key: string, work: LeasedWork<T>, signal?: AbortSignal): Promise<T> {
    const id = JSON.stringify([tenant, key]);
    const before = this.tails.get(id) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    // The next caller waits for this one and, through `before`, for every earlier one.
    const tail = before.then(() => mine);
    this.tails.set(id, tail);
    void tail.then(() => {
      if (this.tails.get(id) === tail) this.tails.delete(id);
    });
    try {
      await abortable(before, signal);
      await this.acquire(tenant, key, id, signal);
      return await this.holding(tenant, key, work);
    } finally {
      done();
    }
  }

  /**
   * Stops renewing every held lease, leaving the rows to whoever stops the cluster (a graceful
   * close deletes them all at once; a halt leaves them to expire), and ends every wait. With a
   * reason, works still running are told their lease is lost.
   */
  stop(reason?: string): void {
    this.stopped = true;
    for (const keeper of this.keepers) keeper.stop(reason);
    this.keepers.clear();
    for (const set of this.waiters.values()) for (const wake of set) wake();
  }

  /** Whether another replica holds the conversation's lease now (an expired lease counts as free). */
  async heldElsewhere(tenant: string, key: string): Promise<boolean> {
    const { rowCount } = await this.ctx.pool.query(
      "SELECT 1 FROM antler_cluster_conversation_leases WHERE tenant = $1 AND key = $2 AND replica <> $3 AND expires_at > now()",
      [tenant, key, this.ctx.replica],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Another replica released a conversation: its local waiters try at once. */
  wake(tenant: string, key: string): void {
    for (const wake of this.waiters.get(JSON.stringify([tenant, key])) ?? []) wake();
  }

  /** A replica left: every local waiter tries at once. */
  wakeAll(): void {
    for (const set of this.waiters.values()) for (const wake of set) wake();
  }

  private async acquire(tenant: string, key: string, id: string, signal: AbortSignal | undefined): Promise<void> {
    const { pool, replica } = this.ctx;
    for (;;) {
      signal?.throwIfAborted();
      if (this.stopped) throw new ClusterError("cluster_closed", "the cluster closed while waiting for a conversation lease");
      const { rowCount } = await pool.query(ACQUIRE, [this.timings.ttlMs, tenant, key, replica]);
      if ((rowCount ?? 0) > 0) return;
      const pause = sleep(this.timings.pollMs * (0.75 + Math.random() / 2), signal);
      const set = this.waiters.get(id) ?? new Set();
      this.waiters.set(id, set.add(pause.wake));
      try {
        await pause.done;
      } finally {
        set.delete(pause.wake);
        if (set.size === 0) this.waiters.delete(id);
      }
    }
  }

  private async holding<T>(tenant: string, key: string, work: LeasedWork<T>): Promise<T> {
    const lost = new AbortController();
    const keeper = new LeaseKeeper(this.ctx, this.timings, [tenant, key], lost);
    this.keepers.add(keeper);
    try {
      return await work(lost.signal);
    } finally {
      keeper.stop();
      // A closed cluster released (or, halted, deliberately kept) its leases already.
      if (this.keepers.delete(keeper)) await this.release(tenant, key);
    }
  }

  private async release(tenant: string, key: string): Promise<void> {
    try {
      await this.ctx.pool.query(
        "DELETE FROM antler_cluster_conversation_leases WHERE tenant = $1 AND key = $2 AND replica = $3",
        [tenant, key, this.ctx.replica],
      );
      this.released(tenant, key);
    } catch (err) {
      this.ctx.logger.warn({ err, key }, "could not release a conversation lease; it runs out on its own");
    }
  }
}

/**
 * Renews a held conversation lease every `renewMs`, and aborts `lost` when the lease is gone or
 * was not renewed in time (measured locally from each renewal's sending, as channel leases are).
 */
class LeaseKeeper {
  private timer: NodeJS.Timeout;
  private deadline: NodeJS.Timeout;
  private stopped = false;
  private readonly logger: Logger;

  constructor(
    private readonly ctx: LeaseContext,
    private readonly timings: ConversationTimings,
    private readonly conversation: [tenant: string, key: string],
    private readonly lost: AbortController,
  ) {
    this.logger = ctx.logger;
    this.deadline = this.arm(performance.now());
    this.timer = setTimeout(() => this.renew(), timings.renewMs);
  }

  stop(reason?: string): void {
    if (reason !== undefined && !this.stopped) this.lost.abort(new Error(`the conversation lease was lost: ${reason}`));
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.deadline);
  }

  private arm(sentAt: number): NodeJS.Timeout {
    const left = sentAt + this.timings.ttlMs - Math.min(1_000, this.timings.ttlMs / 6) - performance.now();
    return setTimeout(() => this.lose("it could not be renewed before it ran out"), Math.max(0, left));
  }

  private renew(): void {
    const sentAt = performance.now();
    const [tenant, key] = this.conversation;
    this.ctx.pool
      .query(RENEW, [this.timings.ttlMs, tenant, key, this.ctx.replica])
      .then(({ rowCount }) => {
        if (this.stopped) return;
        if ((rowCount ?? 0) === 0) return this.lose("another replica took it");
        clearTimeout(this.deadline);
        this.deadline = this.arm(sentAt);
      })
      .catch((err) => this.logger.warn({ err, key }, "could not renew a conversation lease"))
      .finally(() => {
        if (!this.stopped) this.timer = setTimeout(() => this.renew(), this.timings.renewMs);
      });
  }

  private lose(reason: string): void {
    if (this.stopped) return;
    this.stop();
    this.logger.warn({ key: this.conversation[1], reason }, "lost a conversation lease while its work ran");
    this.lost.abort(new Error(`the conversation lease was lost: ${reason}`));
  }
}
