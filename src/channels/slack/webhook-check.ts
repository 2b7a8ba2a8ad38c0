/**
 * An HTTP body is checked before Bolt sees it. A signed request can still carry JSON of any
 * shape, and Bolt (and inbound.ts) read fields without checking them: `event: null` or
 * `actions: 5` would throw inside Bolt and answer 500, which Slack retries. Only the kinds Antler
 * handles are checked, and only the fields that are read; other envelope types (e.g.
 * `app_rate_limited`, slash commands) pass untouched and are acknowledged.
 */
import { isJsonObject } from "../../server/http.js";

/** Fields of an event that are read as strings. */
const EVENT_STRINGS = ["type", "text", "user", "channel", "ts", "thread_ts", "channel_type", "subtype", "bot_id"];
/** Interactive payloads: Bolt reads `user.team_id` of each to route it. */
const INTERACTIVE = new Set([
  "block_actions",
  "block_suggestion",
  "interactive_message",
  "dialog_submission",
  "message_action",
  "shortcut",
  "view_submission",
  "view_closed",
]);

/** Why `body` is not an envelope Antler can hand to Bolt, or undefined when it is. */
export function envelopeProblem(body: Record<string, unknown>): string | undefined {
  if (body.type === "event_callback") return eventProblem(body);
  if (typeof body.type === "string" && INTERACTIVE.has(body.type)) return interactiveProblem(body);
  return undefined;
}

function eventProblem(body: Record<string, unknown>): string | undefined {
  if (typeof body.event_id !== "string" || body.event_id === "") return "event_id is missing";
  const event = body.event;
  if (!isJsonObject(event) || typeof event.type !== "string") return "event is not an object with a type";
  for (const key of EVENT_STRINGS)
    if (event[key] !== undefined && typeof event[key] !== "string") return `event.${key} is not a string`;
  const auths = body.authorizations;
  if (auths !== undefined && !(Array.isArray(auths) && auths.every(isJsonObject)))
    return "authorizations is not a list of objects";
  return undefined;
}

function interactiveProblem(body: Record<string, unknown>): string | undefined {
  const user = body.user;
  if (!isJsonObject(user) || typeof user.id !== "string") return "user is not an object with an id";
  for (const key of ["team", "channel", "container", "message", "view"]) {
    const value = body[key];
    if (value !== undefined && value !== null && !isJsonObject(value)) return `${key} is not an object`;
  }
  if (body.type === "block_actions" && !(Array.isArray(body.actions) && body.actions.every(isJsonObject))) {
    return "actions is not a list of objects";
  }
  if ((body.type === "view_submission" || body.type === "view_closed") && !isJsonObject(body.view)) return "view is missing";
  return undefined;
}
