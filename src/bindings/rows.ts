/**
 * Rows of the binding store's three tables as the store hands them out, for both databases: each
 * store first decodes its own column types (SQLite's JSON text and 0/1, PostgreSQL's bigint
 * strings and jsonb) into these, and the mapping to the store's types is written once.
 */
import type { InboxEntry, InboxState, Json, PendingQuestion, ThreadBinding } from "./types.js";

export interface BindingRecord {
  key: string;
  thread_id: string;
  agent: string | null;
  created_at: number;
  current: boolean;
}

export interface PendingRecord {
  thread_id: string;
  key: string;
  question_id: string;
  interrupt_id: string;
  question: string;
  options: string[];
  kind: string | null;
  posted: Json | null;
  asked_by: NonNullable<PendingQuestion["askedBy"]> | null;
  approval: Json | null;
  created_at: number;
}

export interface InboxRecord {
  channel: string;
  event_id: string;
  key: string;
  state: InboxState;
  payload: Json;
  received_at: number;
  updated_at: number;
  error: string | null;
  owner?: string | null;
}

export function bindingOf(row: BindingRecord): ThreadBinding {
  return {
    key: row.key,
    threadId: row.thread_id,
    createdAt: row.created_at,
    current: row.current,
    ...(row.agent === null ? {} : { agent: row.agent }),
  };
}

export function pendingOf(row: PendingRecord): PendingQuestion {
  return {
    threadId: row.thread_id,
    key: row.key,
    questionId: row.question_id,
    interruptId: row.interrupt_id,
    question: row.question,
    options: row.options,
    ...(row.kind ? { kind: row.kind } : {}),
    ...(row.posted !== null ? { posted: row.posted } : {}),
    ...(row.asked_by ? { askedBy: row.asked_by } : {}),
    ...(row.approval !== null ? { approval: row.approval } : {}),
    createdAt: row.created_at,
  };
}

export function inboxOf(row: InboxRecord): InboxEntry {
  return {
    channel: row.channel,
    eventId: row.event_id,
    key: row.key,
    state: row.state,
    payload: row.payload,
    receivedAt: row.received_at,
    updatedAt: row.updated_at,
    ...(row.error ? { error: row.error } : {}),
    ...(row.owner ? { owner: row.owner } : {}),
  };
}
