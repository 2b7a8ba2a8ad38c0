/**
 * Telegram updates → InboundMessage. Only the fields read here are typed: updates are plain
 * JSON, and Telegraf's union types would need a narrowing step per field for no gain.
 */
import type { ChatType, ConversationRef, InboundMessage } from "../types.js";
import { attachmentsOf, type TgMedia } from "./attachments.js";
import { decodeCallbackData } from "./buttons.js";

export interface TgUser {
  id: number;
  is_bot: boolean;
  first_name?: string;
  last_name?: string;
  username?: string;
}

export interface TgEntity {
  type: string;
  offset: number;
  length: number;
  user?: TgUser;
}

export interface TgMessage extends TgMedia {
  message_id: number;
  from?: TgUser;
  chat: { id: number; type: string };
  date: number;
  text?: string;
  caption?: string;
  entities?: TgEntity[];
  caption_entities?: TgEntity[];
  reply_to_message?: { message_id: number; from?: TgUser };
  message_thread_id?: number;
  is_topic_message?: boolean;
}

export interface TgCallbackQuery {
  id: string;
  from: TgUser;
  message?: TgMessage;
  data?: string;
}

export interface TgUpdate {
  update_id: number;
  message?: TgMessage;
  callback_query?: TgCallbackQuery;
}

/** Who the bot is, from getMe. */
export interface BotIdentity {
  id: number;
  username: string;
}

export type Translated =
  | { kind: "message"; message: InboundMessage }
  | { kind: "click"; message: InboundMessage | undefined; queryId: string; userId: string };

/** The conversation a Telegram message belongs to; undefined for channels (broadcast). */
export function refFor(name: string, bot: BotIdentity, msg: TgMessage, replyTo: boolean): ConversationRef | undefined {
  const chatType: ChatType | undefined =
    msg.chat.type === "private" ? "direct" : msg.chat.type === "group" || msg.chat.type === "supergroup" ? "group" : undefined;
  if (!chatType) return undefined;
  const chatId = String(msg.chat.id);
  // Only forum topics split a group; reply threads of ordinary supergroups stay one conversation.
  const threadId = msg.is_topic_message && msg.message_thread_id !== undefined ? String(msg.message_thread_id) : undefined;
  const ref: ConversationRef = {
    channel: name,
    key: telegramKey(name, bot, chatId, threadId),
    chatId,
    chatType,
  };
  if (threadId) ref.threadId = threadId;
  if (replyTo && chatType === "group") ref.replyToId = String(msg.message_id);
  return ref;
}

/** The conversation key of a chat, or of one forum topic in it. */
export function telegramKey(name: string, bot: BotIdentity, chatId: string, threadId?: string): string {
  return `${name}:${bot.id}:${chatId}${threadId ? `:${threadId}` : ""}`;
}

export function translateUpdate(name: string, bot: BotIdentity, update: TgUpdate, now = Date.now()): Translated | undefined {
  if (update.message) {
    const message = translateMessage(name, bot, update.update_id, update.message, now);
    return message ? { kind: "message", message } : undefined;
  }
  if (update.callback_query) return translateClick(name, bot, update.update_id, update.callback_query, now);
  return undefined;
}

function translateMessage(name: string, bot: BotIdentity, updateId: number, msg: TgMessage, now: number) {
  // A message without text (a photo without caption, a voice note, a sticker) still reaches the
  // core with empty text and its attachments; in groups mention gating keeps it quiet.
  const raw = msg.text ?? msg.caption ?? "";
  const ref = refFor(name, bot, msg, true);
  if (!ref || !msg.from) return undefined;
  const { text, mentioned } = stripMentions(raw, msg.text !== undefined ? msg.entities : msg.caption_entities, bot);
  const repliedToBot = msg.reply_to_message?.from?.id === bot.id;
  const inbound: InboundMessage = {
    channel: name,
    eventId: String(updateId),
    ref,
    user: userOf(msg.from),
    text,
    mentioned: ref.chatType === "direct" || mentioned || repliedToBot,
    sentAt: msg.date ? msg.date * 1000 : now,
  };
  const attachments = attachmentsOf(msg);
  if (attachments.length > 0) inbound.attachments = attachments;
  if (msg.from.is_bot) inbound.fromBot = true;
  return inbound;
}

function translateClick(name: string, bot: BotIdentity, updateId: number, query: TgCallbackQuery, now: number): Translated {
  const decoded = query.data ? decodeCallbackData(query.data) : undefined;
  const ref = query.message ? refFor(name, bot, query.message, false) : undefined;
  const base = { kind: "click" as const, queryId: query.id, userId: String(query.from.id) };
  if (!decoded || !ref || !query.message) return { ...base, message: undefined };
  const message: InboundMessage = {
    channel: name,
    eventId: String(updateId),
    ref,
    user: userOf(query.from),
    text: "",
    mentioned: true,
    action: { ...decoded, messageId: String(query.message.message_id), callbackId: query.id },
    sentAt: now,
  };
  if (query.from.is_bot) message.fromBot = true;
  return { ...base, message };
}

function userOf(from: TgUser): { id: string; name?: string } {
  const name = [from.first_name, from.last_name].filter(Boolean).join(" ") || from.username;
  return name ? { id: String(from.id), name } : { id: String(from.id) };
}

/**
 * Removes `@bot` mentions (and a `text_mention` of the bot) and turns `/cmd@bot` into `/cmd`.
 * Entity offsets are UTF-16 code units, the same as JS string indexes.
 */
export function stripMentions(text: string, entities: TgEntity[] | undefined, bot: BotIdentity) {
  const handle = `@${bot.username}`.toLowerCase();
  let mentioned = false;
  let out = text;
  const sorted = [...(entities ?? [])].sort((a, b) => b.offset - a.offset);
  for (const e of sorted) {
    const part = text.slice(e.offset, e.offset + e.length);
    if (e.type === "mention" && part.toLowerCase() === handle) {
      mentioned = true;
      out = cut(out, e.offset, e.offset + e.length);
    } else if (e.type === "text_mention" && e.user?.id === bot.id) {
      mentioned = true;
      out = cut(out, e.offset, e.offset + e.length);
    } else if (e.type === "bot_command" && part.toLowerCase().endsWith(handle)) {
      mentioned = true;
      out = cut(out, e.offset + e.length - handle.length, e.offset + e.length);
    }
  }
  return { text: out.trim(), mentioned };
}

/** Cuts [from, to) and, if that leaves two spaces side by side, keeps one. */
function cut(text: string, from: number, to: number): string {
  const before = text.slice(0, from);
  let after = text.slice(to);
  if (/\s$/.test(before) && /^[ \t]/.test(after)) after = after.replace(/^[ \t]+/, "");
  return before + after;
}
