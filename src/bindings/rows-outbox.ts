/**
 * The outbox table's rows as both stores hand them out (see rows.ts for the pattern): each store
 * decodes its own column types into `OutboxRecord`, and `outboxOf` maps it to the contract once.
 * `outboxAssignments` turns an `OutboxUpdate` into the columns to set, for both stores' SQL.
 */
import type { OutboxEntry, OutboxKind, OutboxState, OutboxUpdate } from "./outbox.js";
import type { Json } from "./types.js";

export interface OutboxRecord {
  id: string;
  idempotency_key: string;
  body_hash: string;
  kind: OutboxKind;
  channel: string;
  key: string;
  payload: Json;
  source: string;
  state: OutboxState;
  attempts: number;
  next_attempt_at: number;
  owner: string | null;
  lease_until: number | null;
  progress: Json | null;
  result: Json | null;
  error: string | null;
  error_code: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
}

/** The outbox's columns, in the order `INSERT`s name them. */
export const OUTBOX_COLUMNS =
  "id, idempotency_key, body_hash, kind, channel, key, payload, source, state, attempts, next_attempt_at, owner, lease_until, progress, result, error, error_code, created_at, updated_at, sent_at";

/** States in which an entry is held by a replica under a lease. */
export const HELD_STATES: readonly OutboxState[] = ["sending", "running"];

export function outboxOf(row: OutboxRecord): OutboxEntry {
  return {
    id: row.id,
    idempotencyKey: row.idempotency_key,
    bodyHash: row.body_hash,
    kind: row.kind,
    channel: row.channel,
    key: row.key,
    payload: row.payload,
    source: row.source,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    ...(row.owner !== null ? { owner: row.owner } : {}),
    ...(row.lease_until !== null ? { leaseUntil: row.lease_until } : {}),
    ...(row.progress !== null ? { progress: row.progress } : {}),
    ...(row.result !== null ? { result: row.result } : {}),
    ...(row.error !== null ? { error: row.error } : {}),
    ...(row.error_code !== null ? { errorCode: row.error_code } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.sent_at !== null ? { sentAt: row.sent_at } : {}),
  };
}

/** A column to set and its value; JSON values are already encoded as text (null clears). */
export type Assignment = [column: string, value: string | number | null];

/** JSON as a column value: text, or null for "cleared". */
export const jsonValue = (value: Json | null | undefined): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value);

/**
 * The columns an update sets (without `updated_at`, which the store adds). Moving to a state no
 * replica holds releases the entry (owner and lease cleared, a given `leaseUntil` ignored).
 */
export function outboxAssignments(update: OutboxUpdate): Assignment[] {
  const set: Assignment[] = [];
  if (update.state !== undefined) set.push(["state", update.state]);
  const released = update.state !== undefined && !HELD_STATES.includes(update.state);
  if (released) set.push(["owner", null], ["lease_until", null]);
  else if (update.leaseUntil !== undefined) set.push(["lease_until", update.leaseUntil]);
  if (update.attempts !== undefined) set.push(["attempts", update.attempts]);
  if (update.nextAttemptAt !== undefined) set.push(["next_attempt_at", update.nextAttemptAt]);
  if (update.key !== undefined) set.push(["key", update.key]);
  if (update.sentAt !== undefined) set.push(["sent_at", update.sentAt]);
  if (update.progress !== undefined) set.push(["progress", jsonValue(update.progress)]);
  if (update.result !== undefined) set.push(["result", jsonValue(update.result)]);
  if (update.error !== undefined) set.push(["error", update.error]);
  if (update.errorCode !== undefined) set.push(["error_code", update.errorCode]);
  return set;
}
