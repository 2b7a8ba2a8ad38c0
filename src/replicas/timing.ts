/**
 * The replicas' timings, from one rule: everything follows from the lease.
 *
 * - A lease (a channel's or a conversation's) lasts `leaseMs` without renewal.
 * - The heartbeat renews the replica row and every lease every `0.3 × leaseMs`, and a holder
 *   counts its lease as gone half a heartbeat early, so one missed renewal is survived.
 * - A replica whose heartbeat is `leaseMs` old is dead: by then none of its leases can still hold,
 *   so its unfinished messages are taken over as soon as its conversations are free, not later.
 * - Dead replicas' work is looked for every heartbeat.
 *
 * So a killed replica's channels and messages both move within `leaseMs` plus one heartbeat of
 * its last beat. Tests may choose a shorter heartbeat; the rest is derived the same way.
 */

export interface ReplicaTiming {
  /** How often the replica row and its leases are renewed. */
  heartbeatMs: number;
  /** How long a lease lasts without renewal. */
  leaseMs: number;
  /** A replica whose heartbeat is older than this is dead. */
  deadAfterMs: number;
  /** How often dead replicas' unfinished messages are looked for. */
  sweepMs: number;
}

export const DEFAULT_LEASE_MS = 5_000;

/** The share of a lease between two heartbeats. */
const HEARTBEAT_SHARE = 0.3;

/** Every timing from the lease (default 5 s); `heartbeatMs` may be set shorter, never longer than the rule allows. */
export function replicaTiming(options: { leaseMs?: number; heartbeatMs?: number } = {}): ReplicaTiming {
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const longest = leaseMs * HEARTBEAT_SHARE;
  const heartbeatMs = options.heartbeatMs ?? longest;
  if (!(heartbeatMs > 0 && heartbeatMs <= longest)) {
    throw new RangeError(`a heartbeat of ${heartbeatMs} ms does not fit a lease of ${leaseMs} ms (at most ${longest} ms)`);
  }
  return { heartbeatMs, leaseMs, deadAfterMs: leaseMs, sweepMs: heartbeatMs };
}

/**
 * Until when (local clock) a lease granted or renewed by a request sent at `asked` holds for its
 * holder: counted from before the request (the database may have granted it a moment later), and
 * half a heartbeat early, so one missed renewal is survived.
 */
export function leaseHoldsUntil(asked: number, timing: Pick<ReplicaTiming, "leaseMs" | "heartbeatMs">): number {
  return asked + timing.leaseMs - timing.heartbeatMs / 2;
}
