/**
 * What the core keeps in the store's JSON columns, written and read back with their types: an
 * inbound message (the inbox's payload, so a message can be answered after a restart) and a
 * posted message's handle (where a question was shown, so its answer can be shown on it), and
 * the readers the approval state (approvals.ts) is read back with.
 * Reading is lenient the way JSON from an older version must be: a field of the wrong type is
 * left out, and only what a message cannot do without (its ids, its ref, its sender) is required.
 */
import type { Json } from "../bindings/types.js";
import type {
  AttachmentKind,
  ConversationRef,
  InboundAction,
  InboundAttachment,
  InboundMessage,
  JsonValue,
  MessageHandle,
  TurnOrigin,
} from "../channels/types.js";

export type JsonObject = { [k: string]: Json };

/** An object of the fields that are set (JSON has no `undefined`). */
function object(fields: { [k: string]: Json | undefined }): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
  return out;
}

export function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function text(o: JsonObject, key: string): string | undefined {
  const v = o[key];
  return typeof v === "string" ? v : undefined;
}

function required(o: JsonObject, key: string, what: string): string {
  const v = text(o, key);
  if (v === undefined) throw new Error(`a stored ${what} has no ${key}`);
  return v;
}

export function flag(o: JsonObject, key: string): boolean | undefined {
  const v = o[key];
  return typeof v === "boolean" ? v : undefined;
}

export function count(o: JsonObject, key: string): number | undefined {
  const v = o[key];
  return typeof v === "number" ? v : undefined;
}

function extraOf(o: JsonObject, key: string): { [k: string]: JsonValue } | undefined {
  const v = o[key];
  return isObject(v) ? v : undefined;
}

/**
 * Any value as JSON, the way `JSON.stringify` writes it: fields that are undefined (or
 * functions) are left out, and in a list they, like numbers that are not finite, become null.
 */
export function toJson(value: unknown): Json | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return value.map((v) => toJson(v) ?? null);
  if (typeof value !== "object") return undefined;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    const json = toJson(v);
    if (json !== undefined) out[k] = json;
  }
  return out;
}

/** Keeps only the fields that are set. */
export function present<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as T;
}

function refToJson(ref: ConversationRef): JsonObject {
  return object({
    channel: ref.channel,
    key: ref.key,
    chatId: ref.chatId,
    threadId: ref.threadId,
    replyToId: ref.replyToId,
    chatType: ref.chatType,
    workspace: ref.workspace,
    extra: ref.extra,
  });
}

function refFromJson(value: Json | undefined): ConversationRef {
  if (!isObject(value)) throw new Error("a stored message has no ref");
  return present({
    channel: required(value, "channel", "ref"),
    key: required(value, "key", "ref"),
    chatId: required(value, "chatId", "ref"),
    threadId: text(value, "threadId"),
    replyToId: text(value, "replyToId"),
    chatType: value.chatType === "group" ? "group" : "direct",
    workspace: text(value, "workspace"),
    extra: extraOf(value, "extra"),
  });
}

function actionFromJson(value: Json | undefined): InboundAction | undefined {
  if (!isObject(value)) return undefined;
  return present({
    questionId: text(value, "questionId") ?? "",
    buttonId: text(value, "buttonId") ?? "",
    messageId: text(value, "messageId"),
    callbackId: text(value, "callbackId"),
  });
}

const KINDS: readonly AttachmentKind[] = ["image", "file", "audio"];

function attachmentFromJson(value: Json): InboundAttachment[] {
  if (!isObject(value)) return [];
  const kind = KINDS.find((k) => k === value.kind) ?? "file";
  return [
    present({
      kind,
      name: text(value, "name") ?? "file",
      mime: text(value, "mime"),
      size: count(value, "size"),
      source: extraOf(value, "source") ?? {},
    }),
  ];
}

/** The inbox payload of `msg`. */
export function messageToJson(msg: InboundMessage): Json {
  return object({
    channel: msg.channel,
    eventId: msg.eventId,
    ref: refToJson(msg.ref),
    user: object({ id: msg.user.id, name: msg.user.name }),
    text: msg.text,
    mentioned: msg.mentioned,
    inThread: msg.inThread,
    fromBot: msg.fromBot,
    action: msg.action && object({ ...msg.action }),
    attachments: msg.attachments?.map((a) => object({ ...a })),
    sentAt: msg.sentAt,
    origin: msg.origin && toJson(msg.origin),
  });
}

/** The message an inbox payload holds; throws when it is not one. */
export function messageFromJson(payload: Json): InboundMessage {
  if (!isObject(payload)) throw new Error("a stored message is not an object");
  const user = isObject(payload.user) ? payload.user : {};
  const attachments = Array.isArray(payload.attachments) ? payload.attachments.flatMap(attachmentFromJson) : undefined;
  return present({
    channel: required(payload, "channel", "message"),
    eventId: required(payload, "eventId", "message"),
    ref: refFromJson(payload.ref),
    user: present({ id: required(user, "id", "sender"), name: text(user, "name") }),
    text: text(payload, "text") ?? "",
    mentioned: flag(payload, "mentioned") ?? false,
    inThread: flag(payload, "inThread"),
    fromBot: flag(payload, "fromBot"),
    action: actionFromJson(payload.action),
    attachments,
    sentAt: count(payload, "sentAt") ?? 0,
    origin: originFromJson(payload.origin),
  });
}

/** The origin of a turn nobody typed (an API call, a schedule), as stored with its message. */
function originFromJson(value: Json | undefined): TurnOrigin | undefined {
  if (!isObject(value)) return undefined;
  const kind = text(value, "kind");
  const outboxId = text(value, "outboxId");
  if ((kind !== "api" && kind !== "schedule") || !outboxId) return undefined;
  const thread = text(value, "thread");
  return present<TurnOrigin>({
    kind,
    outboxId,
    thread: thread === "fresh" || thread === "conversation" ? thread : undefined,
    agent: text(value, "agent"),
    scheduleId: text(value, "scheduleId"),
  });
}

/** A posted message's handle as stored with its question. */
export function handleToJson(handle: MessageHandle): Json {
  return object({ id: handle.id, ref: refToJson(handle.ref), extra: handle.extra });
}

/** The handle stored with a question; undefined when none was stored (or it is not one). */
export function handleFromJson(value: Json | undefined): MessageHandle | undefined {
  if (!isObject(value)) return undefined;
  const id = text(value, "id");
  if (id === undefined || !isObject(value.ref)) return undefined;
  return present({ id, ref: refFromJson(value.ref), extra: extraOf(value, "extra") });
}
