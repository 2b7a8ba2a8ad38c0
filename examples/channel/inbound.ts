/**
 * The relay's inbound events, turned into what the core takes. An event is the JSON body of one
 * POST to the channel's webhook; a redelivery repeats its `id`. These are pure functions, so the
 * conversation key of each event can be read (and tested) here. A room is one conversation,
 * `<name>:<space, or ->:<room>`; it is a group chat when the event says `group: true`, else a
 * one-to-one chat with the bot.
 */
import { HttpError, type InboundAttachment, type InboundMessage, isJsonObject } from "antler/channel";

/** One event as the relay POSTs it. */
export interface RelayEvent {
  /** The relay's delivery id; the same on a redelivery. */
  id: string;
  /** The room the event happened in. */
  room: string;
  /** The relay's workspace, when it has several; routes match on it. */
  space?: string;
  /** A room with several people in it (else a one-to-one chat with the bot). */
  group?: boolean;
  user: { id: string; name?: string };
  text?: string;
  /** The bot was addressed (always true in a one-to-one room). */
  mentioned?: boolean;
  /** Sent by a bot, this one included. */
  bot?: boolean;
  /** A click on a button the channel sent: what `send` put on the message. */
  click?: { message?: string; question: string; button: string };
  /** Files sent with the message; the channel downloads them from `url` when the core asks. */
  files?: Array<{ url: string; name: string; mime?: string; size?: number; kind?: "image" | "file" | "audio" }>;
  /** When the user sent it (ms since epoch). */
  at?: number;
}

const text = (value: unknown): value is string => typeof value === "string" && value.length > 0;

/** Checks the shape of a POSTed body; bad input is the sender's, a 400 (a retry will not help). */
export function parseEvent(body: unknown): RelayEvent {
  if (!isJsonObject(body)) throw new HttpError(400, "the event is not a JSON object");
  if (!text(body.id) || !text(body.room)) throw new HttpError(400, "the event needs an id and a room");
  const user = body.user;
  if (!isJsonObject(user) || !text(user.id)) throw new HttpError(400, "the event needs a user with an id");
  const click = body.click;
  if (click !== undefined && (!isJsonObject(click) || !text(click.question) || !text(click.button))) {
    throw new HttpError(400, "a click needs a question and a button");
  }
  if (body.files !== undefined && !Array.isArray(body.files)) throw new HttpError(400, "files must be a list");
  for (const file of (body.files as unknown[] | undefined) ?? []) {
    if (!isJsonObject(file) || !text(file.url) || !text(file.name)) throw new HttpError(400, "a file needs a url and a name");
  }
  return body as unknown as RelayEvent;
}

/** The core's message for one event of the channel named `channel`. */
export function eventToInbound(channel: string, event: RelayEvent): InboundMessage {
  const chatType = event.group ? "group" : "direct";
  const ref = {
    channel,
    key: `${channel}:${event.space ?? "-"}:${event.room}`,
    chatId: event.room,
    chatType,
    ...(event.space ? { workspace: event.space } : {}),
  } as const;
  const attachments = (event.files ?? []).map(
    (f): InboundAttachment => ({
      kind: f.kind ?? "file",
      name: f.name,
      ...(f.mime ? { mime: f.mime } : {}),
      ...(f.size !== undefined ? { size: f.size } : {}),
      // Stored with the message, so it must stay JSON and valid after a restart: the file's URL is.
      source: { url: f.url },
    }),
  );
  return {
    channel,
    eventId: event.id,
    ref,
    user: { id: event.user.id, ...(event.user.name ? { name: event.user.name } : {}) },
    text: (event.text ?? "").trim(),
    mentioned: chatType === "direct" || event.mentioned === true,
    ...(event.bot ? { fromBot: true } : {}),
    ...(event.click
      ? {
          action: {
            questionId: event.click.question,
            buttonId: event.click.button,
            ...(event.click.message ? { messageId: event.click.message } : {}),
          },
        }
      : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
    sentAt: event.at ?? Date.now(),
  };
}
