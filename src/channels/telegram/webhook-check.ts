/**
 * A webhook body is checked before Telegraf sees it: anyone may POST to the route, and whoever
 * holds the secret token can still send JSON of any shape. Only the fields that inbound.ts reads
 * are checked, for the kinds of update Antler asks for (message, callback_query); other fields
 * and other kinds pass untouched.
 */
import { isJsonObject } from "../../server/http.js";

type Json = Record<string, unknown>;

/** Why `update` is not an Update Antler can read, or undefined when it is. */
export function updateProblem(update: unknown): string | undefined {
  if (!isJsonObject(update)) return "the body is not a JSON object";
  if (!Number.isSafeInteger(update.update_id)) return "update_id is not an integer";
  if (update.message !== undefined) {
    const problem = messageProblem(update.message);
    if (problem) return `message: ${problem}`;
  }
  if (update.callback_query !== undefined) {
    const problem = queryProblem(update.callback_query);
    if (problem) return `callback_query: ${problem}`;
  }
  return undefined;
}

function messageProblem(msg: unknown): string | undefined {
  if (!isJsonObject(msg)) return "not an object";
  if (!Number.isSafeInteger(msg.message_id)) return "message_id is not an integer";
  const chat = msg.chat;
  if (!isJsonObject(chat) || typeof chat.id !== "number" || typeof chat.type !== "string") return "chat is not {id, type}";
  if (msg.from !== undefined && !isUser(msg.from)) return "from is not a user";
  for (const key of ["text", "caption"]) if (!optional(msg, key, "string")) return `${key} is not a string`;
  for (const key of ["date", "message_thread_id"]) if (!optional(msg, key, "number")) return `${key} is not a number`;
  for (const key of ["entities", "caption_entities"]) {
    const list = msg[key];
    if (list !== undefined && !(Array.isArray(list) && list.every(isEntity))) return `${key} is not a list of entities`;
  }
  const reply = msg.reply_to_message;
  if (reply !== undefined && (!isJsonObject(reply) || (reply.from !== undefined && !isUser(reply.from)))) {
    return "reply_to_message is not a message";
  }
  return mediaProblem(msg);
}

/** The file fields media.ts reads: a photo's sizes, and the one file of the other kinds. */
function mediaProblem(msg: Json): string | undefined {
  const photo = msg.photo;
  if (photo !== undefined && !(Array.isArray(photo) && photo.every(isPhotoSize))) return "photo is not a list of sizes";
  for (const key of ["document", "voice", "audio", "video", "video_note", "animation"]) {
    if (msg[key] !== undefined && !isFile(msg[key])) return `${key} is not a file`;
  }
  return undefined;
}

function isFile(value: unknown): boolean {
  return (
    isJsonObject(value) &&
    typeof value.file_id === "string" &&
    typeof value.file_unique_id === "string" &&
    optional(value, "file_name", "string") &&
    optional(value, "mime_type", "string") &&
    optional(value, "file_size", "number")
  );
}

function isPhotoSize(value: unknown): boolean {
  return isFile(value) && typeof (value as Json).width === "number" && typeof (value as Json).height === "number";
}

function queryProblem(query: unknown): string | undefined {
  if (!isJsonObject(query)) return "not an object";
  if (typeof query.id !== "string") return "id is not a string";
  if (!isUser(query.from)) return "from is not a user";
  if (!optional(query, "data", "string")) return "data is not a string";
  if (query.message !== undefined) {
    const problem = messageProblem(query.message);
    if (problem) return `message: ${problem}`;
  }
  return undefined;
}

function isUser(value: unknown): boolean {
  return isJsonObject(value) && typeof value.id === "number";
}

function isEntity(value: unknown): boolean {
  return (
    isJsonObject(value) && typeof value.type === "string" && typeof value.offset === "number" && typeof value.length === "number"
  );
}

function optional(obj: Json, key: string, type: "string" | "number"): boolean {
  return obj[key] === undefined || typeof obj[key] === type;
}
