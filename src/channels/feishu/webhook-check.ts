/**
 * The events Antler handles are checked before the SDK's dispatcher sees them. An authentic
 * request can still carry fields of the wrong type (`mentions: 5`, `content: "null"`), and
 * inbound.ts reads them unchecked: a throw there answers 500, which Feishu redelivers for hours.
 * Only the fields that are read are checked; other event types pass untouched.
 */
import { isJsonObject } from "../../server/http.js";

type Json = Record<string, unknown>;

/** Why `event` (the envelope's `event`) is not one Antler can read, or undefined when it is. */
export function eventProblem(eventType: string, event: Json): string | undefined {
  if (eventType === "im.message.receive_v1") return messageProblem(event);
  if (eventType === "card.action.trigger") return clickProblem(event);
  return undefined;
}

function messageProblem(event: Json): string | undefined {
  const sender = event.sender;
  if (
    sender !== undefined &&
    !(isJsonObject(sender) && optionalObject(sender, "sender_id") && strings(sender, ["sender_type"]))
  ) {
    return "sender is not an object with sender_id";
  }
  const ids = isJsonObject(sender) ? sender.sender_id : undefined;
  if (isJsonObject(ids) && !strings(ids, ["open_id", "user_id", "union_id"])) return "sender.sender_id holds a non-string id";
  const m = event.message;
  if (!isJsonObject(m)) return "message is not an object";
  const fields = ["message_id", "chat_id", "chat_type", "message_type", "root_id", "parent_id", "create_time"];
  const notString = fields.find((k) => m[k] !== undefined && typeof m[k] !== "string");
  if (notString) return `message.${notString} is not a string`;
  if (typeof m.content !== "string" || !isJsonObject(parseOrUndefined(m.content))) {
    return "message.content is not a JSON object in a string";
  }
  const mentions = m.mentions;
  if (mentions !== undefined && !(Array.isArray(mentions) && mentions.every((x) => isJsonObject(x) && optionalObject(x, "id")))) {
    return "message.mentions is not a list of mentions";
  }
  return undefined;
}

function clickProblem(event: Json): string | undefined {
  for (const key of ["operator", "action", "context"]) if (!optionalObject(event, key)) return `${key} is not an object`;
  if (isJsonObject(event.operator) && !strings(event.operator, ["open_id", "user_id"])) return "operator holds a non-string id";
  if (isJsonObject(event.context) && !strings(event.context, ["open_message_id", "open_chat_id"])) {
    return "context holds a non-string id";
  }
  return undefined;
}

/** Each of `keys` is absent or a string. */
function strings(obj: Json, keys: string[]): boolean {
  return keys.every((k) => obj[k] === undefined || typeof obj[k] === "string");
}

function optionalObject(obj: Json, key: string): boolean {
  return obj[key] === undefined || isJsonObject(obj[key]);
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
