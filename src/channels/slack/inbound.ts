/**
 * Slack events → InboundMessage. Pure functions over the event bodies, so the mapping (keys,
 * mention stripping, what is ignored) is readable in one place; see README.md for the table.
 */

import type { ConversationRef, InboundMessage } from "../types.js";
import { attachmentsOf, type SlackFile } from "./attachments.js";
import { ACTION_PREFIX, decodeButtonValue } from "./buttons.js";

/** The parts of an Events API `event` the adapter reads. */
export interface SlackEvent {
  type: string;
  subtype?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
  channel?: string;
  channel_type?: string;
  team?: string;
  /** Files shared with the message (`file_share` messages, and mentions that carry a file). */
  files?: SlackFile[];
}

/** An Events API envelope (HTTP body, or Socket Mode payload). */
export interface SlackEventBody {
  event_id?: string;
  team_id?: string;
  event?: SlackEvent;
}

/** A `block_actions` interaction payload. */
export interface SlackActionBody {
  type: string;
  user?: { id?: string; name?: string; username?: string; team_id?: string };
  team?: { id?: string } | null;
  channel?: { id?: string; name?: string };
  container?: { message_ts?: string; channel_id?: string; thread_ts?: string };
  message?: { ts?: string; thread_ts?: string };
  actions?: Array<{ action_id?: string; value?: string; action_ts?: string }>;
}

/** What the translation needs to know about the bot and its threads. */
export interface InboundContext {
  /** Channel instance name: the key prefix. */
  name: string;
  botUserId: string;
  teamId: string;
  /** True when the bot is already part of this channel thread (it was mentioned there). */
  isBotThread(channel: string, threadTs: string): boolean;
}

/**
 * Message subtypes that are still a person writing; every other subtype (edits, joins, bots) is
 * ignored. `file_share` is a message with files (its text is the caption); `slack_audio` is
 * accepted too, for voice clips reported under their own subtype.
 */
const USER_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast", "slack_audio"]);

export function conversationKey(name: string, team: string, channel: string, thread?: string): string {
  return thread ? `${name}:${team}:${channel}:${thread}` : `${name}:${team}:${channel}`;
}

/** Removes the bot's `<@U…>` mention and decodes Slack's three escaped characters. */
export function stripMention(text: string, botUserId: string): string {
  const mention = new RegExp(`<@${escapeRegExp(botUserId)}(?:\\|[^>]*)?>[,:]?`, "g");
  return decodeEntities(text.replace(mention, " "))
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

export function mentionsBot(text: string | undefined, botUserId: string): boolean {
  return text?.includes(`<@${botUserId}>`) === true || text?.includes(`<@${botUserId}|`) === true;
}

function decodeEntities(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function fromABot(event: SlackEvent, ctx: InboundContext): boolean {
  return event.bot_id !== undefined || event.subtype === "bot_message" || event.user === ctx.botUserId;
}

function sentAt(ts: string | undefined): number {
  const n = Number(ts);
  return Number.isFinite(n) && n > 0 ? Math.round(n * 1000) : Date.now();
}

type UserEvent = SlackEvent & { user: string; ts: string };

/** The InboundMessage for a person's message, once its conversation is known. */
function userMessage(
  eventId: string,
  event: UserEvent,
  ref: ConversationRef,
  ctx: InboundContext,
  mentioned: boolean,
): InboundMessage {
  const attachments = attachmentsOf(event.files);
  return {
    channel: ctx.name,
    eventId,
    ref,
    user: { id: event.user },
    text: stripMention(event.text ?? "", ctx.botUserId),
    mentioned,
    ...(attachments.length > 0 ? { attachments } : {}),
    sentAt: sentAt(event.ts),
  };
}

function isDirectChannel(event: SlackEvent): boolean {
  return event.channel_type === "im";
}

/** An `app_mention` in a channel: the reply goes into the mention's thread, which is the conversation. */
export function fromMention(body: SlackEventBody, ctx: InboundContext): InboundMessage | undefined {
  const event = body.event;
  if (!event?.channel || !event.ts || !event.user || !body.event_id || fromABot(event, ctx)) return undefined;
  const team = body.team_id ?? event.team ?? ctx.teamId;
  const thread = event.thread_ts ?? event.ts;
  const ref: ConversationRef = {
    channel: ctx.name,
    key: conversationKey(ctx.name, team, event.channel, thread),
    chatId: event.channel,
    ...(team ? { workspace: team } : {}),
    threadId: thread,
    replyToId: event.ts,
    chatType: "group",
    extra: { team, user: event.user },
  };
  return userMessage(body.event_id, event as UserEvent, ref, ctx, true);
}

/**
 * A `message` event. DMs are one conversation each; in channels only thread follow-ups count as
 * addressed to the bot, and a message that mentions the bot is dropped because its
 * `app_mention` twin carries it.
 */
export function fromMessage(body: SlackEventBody, ctx: InboundContext): InboundMessage | undefined {
  const event = body.event;
  if (!event?.channel || !event.ts || !body.event_id) return undefined;
  if (!USER_SUBTYPES.has(event.subtype) || fromABot(event, ctx) || !event.user) return undefined;
  const team = body.team_id ?? event.team ?? ctx.teamId;
  const direct = isDirectChannel(event);
  if (!direct && mentionsBot(event.text, ctx.botUserId)) return undefined;
  const thread = direct ? undefined : (event.thread_ts ?? event.ts);
  const followUp = !direct && event.thread_ts !== undefined && ctx.isBotThread(event.channel, event.thread_ts);
  const ref: ConversationRef = {
    channel: ctx.name,
    key: conversationKey(ctx.name, team, event.channel, thread),
    chatId: event.channel,
    ...(team ? { workspace: team } : {}),
    // A DM reply stays where the user wrote: top level, or the DM thread they used.
    threadId: direct ? event.thread_ts : thread,
    replyToId: event.ts,
    chatType: direct ? "direct" : "group",
    extra: { team, user: event.user },
  };
  const msg = userMessage(body.event_id, event as UserEvent, ref, ctx, direct || followUp);
  // The core knows the thread's conversation durably: a follow-up after a restart still counts.
  if (!direct && event.thread_ts !== undefined && event.thread_ts !== event.ts) msg.inThread = true;
  return msg;
}

/** A `block_actions` click on one of the adapter's buttons. */
export function fromAction(body: SlackActionBody, ctx: InboundContext): InboundMessage | undefined {
  const action = body.actions?.find((a) => a.action_id?.startsWith(ACTION_PREFIX));
  const decoded = decodeButtonValue(action?.value);
  const channel = body.channel?.id ?? body.container?.channel_id;
  const messageTs = body.message?.ts ?? body.container?.message_ts;
  const user = body.user?.id;
  if (!action || !decoded || !channel || !messageTs || !user) return undefined;
  const team = body.team?.id ?? body.user?.team_id ?? ctx.teamId;
  // Slack DM channel ids start with D; the payload has no channel_type.
  const direct = channel.startsWith("D") || body.channel?.name === "directmessage";
  const threadTs = body.message?.thread_ts ?? body.container?.thread_ts;
  const thread = direct ? undefined : (threadTs ?? messageTs);
  return {
    channel: ctx.name,
    eventId: `action:${channel}:${messageTs}:${action.action_ts ?? action.action_id}:${user}`,
    ref: {
      channel: ctx.name,
      key: conversationKey(ctx.name, team, channel, thread),
      chatId: channel,
      ...(team ? { workspace: team } : {}),
      threadId: direct ? threadTs : thread,
      chatType: direct ? "direct" : "group",
      extra: { team, user },
    },
    user: { id: user, ...(body.user?.name ? { name: body.user.name } : {}) },
    text: "",
    mentioned: true,
    action: { ...decoded, messageId: messageTs },
    sentAt: sentAt(action.action_ts),
  };
}
