/**
 * Channel leadership: one replica at a time holds a channel's lease row and runs its connection.
 *
 * Every tick tries one atomic upsert that succeeds only when the row is free, expired (database
 * clock) or already ours, and then pushes the expiry forward. Safety rests on a local deadline:
 * a successful renewal sent at local time `t` guarantees the row until at least `t + ttl` (the
 * database's `now()` is later than `t`), so the leader gives up at `t + ttl - margin` unless a
 * newer renewal came back. A leader cut off from the database therefore stops before anyone
 * else can take its channel, however long its queries hang.
 */
import type pg from "pg";
import type { Logger } from "../log/logger.js";
import { Loop } from "./loop.js";
import { msInterval } from "./replicas.js";
import type { Leadership, LeadershipListener } from "./types.js";

const ACQUIRE = `
INSERT INTO antler_cluster_channel_leases AS l (channel, replica, acquired_at, expires_at)
VALUES ($2, $3, now(), now() + ${msInterval(1)})
ON CONFLICT (channel) DO UPDATE SET
  replica = EXCLUDED.replica,
  acquired_at = CASE WHEN l.replica = EXCLUDED.replica THEN l.acquired_at ELSE now() END,
  expires_at = EXCLUDED.expires_at
WHERE l.replica = EXCLUDED.replica OR l.expires_at <= now()
RETURNING replica`;

export interface LeaseContext {
  pool: pg.Pool;
  replica: string;
  logger: Logger;
}

export interface LeadershipTimings {
  ttlMs: number;
  everyMs: number;
}

export class ChannelLeadership implements Leadership {
  private told = false;
  private deadline: NodeJS.Timeout | undefined;
  private calls: Promise<void> = Promise.resolve();
  private ended = false;
  private readonly loop: Loop;
  private readonly margin: number;

  constructor(
    private readonly ctx: LeaseContext,
    readonly channel: string,
    private readonly listener: LeadershipListener,
    private readonly timings: LeadershipTimings,
    /** Called once the loop has ended for good (resigned), with whether the lease row was deleted. */
    private readonly onEnd: (released: boolean) => void,
  ) {
    this.margin = Math.min(1_000, Math.floor(timings.ttlMs / 6));
    this.loop = new Loop(
      () => this.tick(),
      timings.everyMs,
      (err) =>
        ctx.logger.warn({ err, channel, replica: ctx.replica }, "could not renew a channel lease; keeping it until it runs out"),
    );
  }

  get leading(): boolean {
    return this.told;
  }

  start(): void {
    this.loop.start();
  }

  /** Tries at once (another replica just released the channel), unless this replica leads it already. */
  poke(): void {
    if (!this.told) this.loop.poke();
  }

  async resign(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.loop.stop();
    clearTimeout(this.deadline);
    // The connection stops before the lease is released, so no two replicas ever run it at once.
    if (this.told) this.tell(false);
    await this.calls;
    try {
      await this.ctx.pool.query("DELETE FROM antler_cluster_channel_leases WHERE channel = $1 AND replica = $2", [
        this.channel,
        this.ctx.replica,
      ]);
      this.onEnd(true);
    } catch (err) {
      this.ctx.logger.warn({ err, channel: this.channel }, "could not release a channel lease; it runs out on its own");
      this.onEnd(false);
    }
  }

  /** Stops every timer and tells nobody: what a killed process leaves behind. */
  halt(): void {
    this.ended = true;
    void this.loop.stop();
    clearTimeout(this.deadline);
  }

  private async tick(): Promise<void> {
    const sentAt = performance.now();
    const { rows } = await this.ctx.pool.query(ACQUIRE, [this.timings.ttlMs, this.channel, this.ctx.replica]);
    if (this.ended) return;
    if (rows.length === 0) return this.lose("another replica holds the channel's lease");
    const left = sentAt + this.timings.ttlMs - this.margin - performance.now();
    if (left <= 0) return this.lose("the lease's renewal came back too late to count on");
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => this.lose("the lease could not be renewed before it ran out"), left);
    if (!this.told) {
      this.ctx.logger.info({ channel: this.channel, replica: this.ctx.replica }, "this replica leads the channel now");
      this.tell(true);
    }
  }

  private lose(reason: string): void {
    clearTimeout(this.deadline);
    if (!this.told) return;
    this.ctx.logger.warn(
      { channel: this.channel, replica: this.ctx.replica, reason },
      "this replica no longer leads the channel",
    );
    this.tell(false);
  }

  /** Calls the listener after any call still running, so calls alternate and never overlap. */
  private tell(leading: boolean): void {
    this.told = leading;
    this.calls = this.calls
      .then(() => this.listener(leading))
      .catch((err) => this.ctx.logger.error({ err, channel: this.channel, leading }, "a channel's leadership listener failed"));
  }
}
