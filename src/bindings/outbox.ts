/**
 * The outbox: messages and agent runs Antler was asked to start on its own (`POST /api/send`,
 * `POST /api/runs`, a schedule's fire), written down before the caller hears "accepted", then
 * delivered by whichever replica runs the target channel. Delivery is claimed under a lease, so
 * a replica that dies mid-delivery leaves the entry to another one once the lease runs out.
 *
 * One entry per idempotency key per tenant: asking again with the same key finds the first entry.
 * Entries of one conversation (`channel` + `key`) are delivered in the order they were enqueued:
 * a claim never hands out an entry while an older unfinished one of the same conversation waits.
 */
import type { Json } from "../storage/json.js";

/** `send`: post a fixed message. `run`: start an agent turn whose reply is the message. */
export type OutboxKind = "send" | "run";

/**
 * `queued`: waiting for (another) attempt. `sending`: a replica holds it and is posting.
 * `running`: an agent turn was started for it and has not ended. `sent`: the platform accepted
 * every part (for a run: the turn ended and its reply was delivered). `failed`: given up, with
 * the reason.
 */
export type OutboxState = "queued" | "sending" | "running" | "sent" | "failed";

export const OUTBOX_FINAL_STATES: readonly OutboxState[] = ["sent", "failed"];

/** What a caller hands in; the store adds state, attempts and times. */
export interface NewOutboxEntry {
  /** Unique id (a UUID), chosen by the caller. */
  id: string;
  /** The caller's idempotency key; unique per tenant. */
  idempotencyKey: string;
  /** Hash of the request body, so the same key with another body can be told apart. */
  bodyHash: string;
  kind: OutboxKind;
  /** Channel instance name. */
  channel: string;
  /**
   * Ordering key: the conversation key when it is known, else a stable stand-in for the target
   * (e.g. `telegram:~user:42`). Entries with the same `channel` + `key` go out in order.
   */
  key: string;
  /** Target and content as the core encodes them; opaque here. */
  payload: Json;
  /** Where it came from: `api`, or `schedule:<id>`. */
  source: string;
  /** Earliest time to attempt (ms); defaults to now. */
  notBefore?: number;
}

export interface OutboxEntry {
  id: string;
  idempotencyKey: string;
  bodyHash: string;
  kind: OutboxKind;
  channel: string;
  key: string;
  payload: Json;
  source: string;
  state: OutboxState;
  /** Attempts started so far. */
  attempts: number;
  /** When the next attempt may start (ms). */
  nextAttemptAt: number;
  /** The replica that holds the entry (while `sending`/`running`), and until when. */
  owner?: string;
  leaseUntil?: number;
  /** Delivery progress the core keeps between attempts (parts sent, handles); opaque here. */
  progress?: Json;
  /** What the platform gave back (message ids), set when sent. */
  result?: Json;
  /** Why it failed (short, for people), and its stable code. */
  error?: string;
  errorCode?: string;
  createdAt: number;
  updatedAt: number;
  /** When it reached `sent` (ms). */
  sentAt?: number;
}

/** Fields a holder may change; undefined leaves a field as it is, null clears it. */
export interface OutboxUpdate {
  state?: OutboxState;
  attempts?: number;
  nextAttemptAt?: number;
  /** New lease end; ignored unless the entry stays `sending`/`running`. */
  leaseUntil?: number;
  progress?: Json | null;
  result?: Json | null;
  error?: string | null;
  errorCode?: string | null;
  /** The key, once the target is resolved (the entry keeps its place in the order). */
  key?: string;
  sentAt?: number;
}

export interface OutboxFilter {
  state?: OutboxState;
  channel?: string;
  /** Only entries with this source (e.g. `schedule:<id>`). */
  source?: string;
  /** Newest first; default 100. */
  limit?: number;
}

export interface Outbox {
  /**
   * Writes an entry, or finds the one already stored under its idempotency key (whatever its body:
   * the caller compares `bodyHash`). `created` says which.
   */
  enqueueOutbound(entry: NewOutboxEntry): Promise<{ entry: OutboxEntry; created: boolean }>;
  getOutbound(id: string): Promise<OutboxEntry | undefined>;
  getOutboundByKey(idempotencyKey: string): Promise<OutboxEntry | undefined>;
  /**
   * Claims up to `limit` entries of `channels` for `owner`, atomically (of replicas asking at
   * once, each entry goes to exactly one): entries `queued` with `nextAttemptAt <= now`, and
   * entries `sending`/`running` whose lease ended before `now` (their holder died). A claimed
   * entry is `sending` (or stays `running`), owned by `owner`, leased until `now + leaseMs`, with
   * `attempts` unchanged (the caller counts). Never an entry while an older unfinished entry of
   * the same `channel` + `key` exists. Oldest first.
   */
  claimOutbound(owner: string, channels: string[], now: number, leaseMs: number, limit: number): Promise<OutboxEntry[]>;
  /**
   * Changes an entry `owner` holds (`sending`/`running` and owned by it). False, changing
   * nothing, when it holds it no longer (its lease ran out and another replica took it).
   * Moving it to `queued`, `sent` or `failed` releases it.
   */
  updateOutbound(id: string, owner: string, update: OutboxUpdate): Promise<boolean>;
  /** Entries, newest first. */
  listOutbound(filter?: OutboxFilter): Promise<OutboxEntry[]>;
  /** Deletes `sent`/`failed` entries last updated before `before` (ms). Returns how many. */
  pruneOutbox(before: number): Promise<number>;
}
