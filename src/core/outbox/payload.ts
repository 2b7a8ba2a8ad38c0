/**
 * What an outbox entry carries, as the core writes it into the store's opaque `payload`: where it
 * goes and what it says (a `send`), or what the agent is asked (a `run`).
 */
import type { OutboxEntry } from "../../bindings/outbox.js";
import type { Json } from "../../bindings/types.js";
import type { ConversationRef, SendTarget } from "../../channels/types.js";

/**
 * Where an entry goes: a ref the channel resolved when the request came in, a conversation key
 * (posted to the ref the conversation was last reached by), or a target still to resolve (the
 * channel ran on another replica when the request came in).
 */
export type OutboxTarget = { ref: ConversationRef } | { key: string } | { spec: SendTarget };

/** A file to post after the text: base64 in the store, checked for size when accepted. */
export interface OutboxFile {
  name: string;
  mime: string;
  /** Base64. */
  data: string;
  kind: "image" | "file";
}

export interface SendPayload {
  target: OutboxTarget;
  /** Markdown. */
  text: string;
  files?: OutboxFile[];
}

export interface RunPayload {
  target: OutboxTarget;
  prompt: string;
  /** The agent to run instead of the conversation's. */
  agent?: string;
  thread?: "fresh" | "conversation";
  /** Whom the run acts for (a schedule's maker); an API run acts for the API. */
  user?: { id: string; name?: string };
  /** The schedule that fired it. */
  scheduleId?: string;
}

export type OutboxPayload = SendPayload | RunPayload;

/** Delivery progress kept between attempts: parts posted so far, their message ids, and the ref resolved. */
export interface SendProgress {
  parts: number;
  ids: string[];
  ref?: ConversationRef;
}

export function payloadJson(payload: OutboxPayload): Json {
  return JSON.parse(JSON.stringify(payload)) as Json;
}

export function sendPayloadOf(entry: OutboxEntry): SendPayload {
  return entry.payload as unknown as SendPayload;
}

export function runPayloadOf(entry: OutboxEntry): RunPayload {
  return entry.payload as unknown as RunPayload;
}

export function targetOf(entry: OutboxEntry): OutboxTarget {
  return (entry.payload as unknown as { target: OutboxTarget }).target;
}

export function progressOf(entry: OutboxEntry): SendProgress {
  const p = entry.progress as unknown as Partial<SendProgress> | undefined;
  return { parts: p?.parts ?? 0, ids: p?.ids ?? [], ...(p?.ref ? { ref: p.ref } : {}) };
}

/** A stand-in ordering key for a target not resolved yet: the same target gives the same key. */
export function provisionalKey(channel: string, spec: SendTarget): string {
  if (spec.user !== undefined) return `${channel}:~user:${spec.workspace ?? ""}:${spec.user}`;
  return `${channel}:~chat:${spec.workspace ?? ""}:${spec.chat}${spec.thread ? `:${spec.thread}` : ""}`;
}

/** The schedule a `schedule:<id>` source names, if any. */
export function scheduleOfSource(source: string): string | undefined {
  return source.startsWith("schedule:") ? source.slice("schedule:".length) : undefined;
}
