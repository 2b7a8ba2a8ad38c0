/**
 * Channel leases: a channel with one connection per bot (Telegram polling, a socket) runs on the
 * replica holding its lease in `antler_channel_leases`. The leader renews it every heartbeat;
 * when it dies the lease runs out and another replica takes it, within the lease plus one
 * heartbeat. A leader that cannot renew steps down once its lease would have run out, rather
 * than risk two processes polling one bot. A lease given up is broadcast, so the others compete
 * for it at once.
 */
import type { Broadcasts } from "./broadcasts.js";
import type { ReplicaContext } from "./context.js";
import { leaseHoldsUntil } from "./timing.js";

/** The broadcast that says a channel's lease was given up. */
const RELEASED = "channel-released";

export class ChannelLeases {
  /** Channels this replica wants to lead, with what to tell when it gains or loses one. */
  private readonly candidates = new Map<string, (leading: boolean) => void>();
  /** Channels it leads, and until when (local clock) its last renewal holds. */
  private readonly leading = new Map<string, number>();
  /** The leader of each channel, as last read. */
  private readonly leaders = new Map<string, string | null>();

  constructor(
    private readonly context: ReplicaContext,
    private readonly broadcasts: Broadcasts,
    /** Runs `work` after the heartbeat's work under way, so two renewals never overlap. */
    private readonly queue: (work: () => Promise<void>) => void,
  ) {
    // A channel another replica gave up is competed for at once, not at the next heartbeat.
    broadcasts.on(RELEASED, (data) => this.contendNow((data as { channel?: unknown }).channel));
  }

  /**
   * Competes for the channel's lease from now on: `onChange(true)` when this replica becomes its
   * leader, `onChange(false)` when it stops being one. The first attempt is made at once.
   */
  async lead(channel: string, onChange: (leading: boolean) => void): Promise<void> {
    this.candidates.set(channel, onChange);
    await this.contend(channel);
  }

  /**
   * Stops competing for the channel and gives its lease up at once; the other replicas are told,
   * and compete for it without waiting for their next heartbeat. The caller has stopped the
   * channel's connection first (nothing tells the caller's `onChange`).
   */
  async resign(channel: string): Promise<void> {
    this.candidates.delete(channel);
    const led = this.leading.delete(channel);
    try {
      await this.context.pool.query("DELETE FROM antler_channel_leases WHERE channel = $1 AND replica = $2", [
        channel,
        this.context.id,
      ]);
      if (led) await this.broadcasts.broadcast(RELEASED, { channel });
    } catch (err) {
      this.context.logger.warn({ err, channel }, "could not give up a channel lease");
    }
  }

  /** Whether this replica leads the channel now. */
  leads(channel: string): boolean {
    return this.leading.has(channel);
  }

  /** The replica whose lease on the channel has not run out, if any (read now). */
  async leaderOf(channel: string): Promise<string | null> {
    const { rows } = await this.context.pool.query<{ replica: string }>(
      "SELECT replica FROM antler_channel_leases WHERE channel = $1 AND expires_at > now()",
      [channel],
    );
    return rows[0]?.replica ?? null;
  }

  /** The leader of each channel as this replica last saw it (for status; no query). */
  knownLeader(channel: string): string | null | undefined {
    return this.leaders.get(channel);
  }

  /** The heartbeat's part: takes or renews every channel lease wanted, one after another. */
  async renewAll(): Promise<void> {
    for (const channel of this.candidates.keys()) await this.contend(channel);
  }

  /** Steps down from every channel whose last renewal has run out by `now`, whatever the database is doing. */
  stepDownIfExpired(now: number): void {
    for (const [channel, until] of this.leading) {
      if (now < until) continue;
      this.leading.delete(channel);
      this.tell(channel, false);
    }
  }

  /** Stops competing, gives up every lease this replica holds, and tells the others which channels are free. */
  async close(): Promise<void> {
    this.candidates.clear();
    const led = [...this.leading.keys()];
    this.leading.clear();
    await this.context.pool.query("DELETE FROM antler_channel_leases WHERE replica = $1", [this.context.id]);
    for (const channel of led) await this.broadcasts.broadcast(RELEASED, { channel });
  }

  /** Takes or renews the channel's lease, and tells when leadership changed. */
  private async contend(channel: string): Promise<void> {
    const { pool, id, timing, logger } = this.context;
    const asked = Date.now();
    let holder: string | null | undefined;
    try {
      const { rows } = await pool.query<{ replica: string }>(
        `INSERT INTO antler_channel_leases (channel, replica, expires_at)
           VALUES ($1, $2, now() + $3 * interval '1 millisecond')
         ON CONFLICT (channel) DO UPDATE SET
           replica = EXCLUDED.replica,
           expires_at = EXCLUDED.expires_at,
           since = CASE WHEN antler_channel_leases.replica = EXCLUDED.replica THEN antler_channel_leases.since ELSE now() END
         WHERE antler_channel_leases.replica = EXCLUDED.replica OR antler_channel_leases.expires_at < now()
         RETURNING replica`,
        [channel, id, timing.leaseMs],
      );
      if (rows.length > 0) holder = id;
      else holder = await this.leaderOf(channel);
    } catch (err) {
      logger.warn({ err, channel }, "could not renew a channel lease");
    }
    if (this.context.closed() || !this.candidates.has(channel)) return;
    if (holder === id) {
      const had = this.leading.has(channel);
      this.leading.set(channel, leaseHoldsUntil(asked, timing));
      this.leaders.set(channel, id);
      if (!had) this.tell(channel, true);
      return;
    }
    if (holder !== undefined) this.leaders.set(channel, holder);
    const until = this.leading.get(channel);
    // Taken by another replica, or not renewed in time: stop before two processes run the bot.
    if (until !== undefined && (holder !== undefined || Date.now() >= until)) {
      this.leading.delete(channel);
      this.tell(channel, false);
    }
  }

  /** Competes for a channel another replica just gave up, if this one wants it. */
  private contendNow(channel: unknown): void {
    if (this.context.closed() || typeof channel !== "string" || !this.candidates.has(channel)) return;
    this.queue(() => this.contend(channel));
  }

  private tell(channel: string, leading: boolean): void {
    this.context.logger.info(
      { channel, replica: this.context.id },
      leading ? "this replica now runs the channel" : "this replica no longer runs the channel",
    );
    try {
      this.candidates.get(channel)?.(leading);
    } catch (err) {
      this.context.logger.error({ err, channel }, "leadership change handler failed");
    }
  }
}
