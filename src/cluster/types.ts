/**
 * The contract of replica coordination: what one gateway process learns and promises about the
 * other processes that share its PostgreSQL database. Every time limit here is enforced with the
 * database's clock (`now()`), so replicas whose local clocks disagree still agree on who holds
 * what; only "how long since my last renewal" is measured locally, and only to give a lease up
 * early, never to keep one longer.
 */
import type { Logger } from "../log/logger.js";

/** How a `Cluster` is opened. Every field is optional; the timings' defaults suit production. */
export interface ClusterOptions {
  /** This replica's id; default `<hostname>-<pid>-<random>`. Must be unique among live replicas. */
  replicaId?: string;
  /** Where this replica's admin HTTP server answers, shown to the others (`/api/replicas`). */
  adminUrl?: string;
  /** How often the replica heartbeats and renews its channel leases (default 2000 ms). */
  heartbeatMs?: number;
  /** A replica whose last heartbeat is older than this is dead (default 10000 ms). */
  deadAfterMs?: number;
  /**
   * How long a channel lease lasts without renewal (default 6000 ms). A dead leader's channel
   * is taken over within this plus `heartbeatMs`, which must stay under 10 s.
   */
  leaderTtlMs?: number;
  /** How long a conversation lease lasts without renewal (default 6000 ms; renewed every `heartbeatMs`). */
  conversationTtlMs?: number;
  /** How often a waiting `withConversation` tries the lease again, besides being woken on release (default 150 ms). */
  pollMs?: number;
  /** The LISTEN/NOTIFY channel every replica of one deployment uses (default `antler_cluster`). */
  notifyChannel?: string;
  /** Where the cluster logs; silent by default. */
  logger?: Logger;
}

/** One live replica, as `Cluster.replicas()` lists it. */
export interface ReplicaInfo {
  /** Its id (`ClusterOptions.replicaId`). */
  id: string;
  /** The host name it runs on. */
  host: string;
  /** Its process id on that host. */
  pid: number;
  /** Its admin URL, if it gave one. */
  adminUrl: string | null;
  /** When it registered (database clock). */
  startedAt: Date;
  /** Its last heartbeat (database clock). */
  heartbeatAt: Date;
  /** The channels whose lease it holds now, sorted. */
  leads: string[];
}

/**
 * Told when this replica becomes (`true`) or stops being (`false`) a channel's leader. On
 * `false` the channel's connection must stop at once: another replica may start it as soon as
 * the lease runs out. Calls for one channel never overlap and always alternate; a returned
 * promise is awaited before the next call.
 */
export type LeadershipListener = (leading: boolean) => void | Promise<void>;

/** What `Cluster.lead()` returns: the running leadership loop of one channel. */
export interface Leadership {
  /** The channel it competes for. */
  readonly channel: string;
  /** Whether this replica holds the channel's lease now, as far as it can tell. */
  readonly leading: boolean;
  /** Stops competing: calls the listener with `false` if leading, then releases the lease at once. */
  resign(): Promise<void>;
}

/**
 * Work run under a conversation lease. Its signal aborts when the lease was lost while it ran
 * (the database was unreachable for longer than the lease, or another replica took it): the
 * work should then stop writing to the conversation.
 */
export type LeasedWork<T> = (lost: AbortSignal) => Promise<T>;

/** Receives a broadcast another replica sent: its payload (parsed JSON) and the sender's id. */
export type BroadcastHandler = (payload: unknown, from: string) => void;
