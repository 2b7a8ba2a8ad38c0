/**
 * Feishu events → {@link InboundMessage}. The SDK's dispatcher flattens a schema-2.0 envelope, so
 * handlers see the header fields (`event_id`, `tenant_key`, …) next to the event's own fields.
 */
import type { ConversationRef, InboundMessage } from "../types.js";
import { messageAttachments } from "./attachments.js";
import { readButtonValue } from "./cards.js";

export interface Mention {
  key?: string;
  id?: { open_id?: string; user_id?: string; union_id?: string };
  name?: string;
}

/** `im.message.receive_v1`, as the dispatcher hands it over. */
export interface MessageEvent {
  event_id?: string;
  tenant_key?: string;
  sender?: { sender_id?: { open_id?: string; user_id?: string; union_id?: string }; sender_type?: string };
  message?: {
    message_id?: string;
    root_id?: string;
    parent_id?: string;
    chat_id?: string;
    chat_type?: string;
    message_type?: string;
    content?: string;
    create_time?: string;
    mentions?: Mention[];
  };
}

/** `card.action.trigger`, as the dispatcher hands it over. */
export interface CardActionEvent {
  event_id?: string;
  tenant_key?: string;
  operator?: { open_id?: string; user_id?: string };
  action?: { tag?: string; value?: unknown };
  context?: { open_message_id?: string; open_chat_id?: string };
}

export interface InboundContext {
  /** Channel instance name. */
  channel: string;
  /** The bot's own open_id, from `/bot/v3/info`. */
  botOpenId: string;
  /** Topic roots the bot has posted in: a message there addresses the bot without a mention. */
  isBotTopic(rootId: string): boolean;
}

/** Conversation key: p2p → the chat; group → the topic (root message). */
export function conversationKey(channel: string, tenant: string | undefined, chatId: string, rootId?: string): string {
  const base = `${channel}:${tenant || "default"}:${chatId}`;
  return rootId ? `${base}:${rootId}` : base;
}

/**
 * Translates a message event. Images, files, voice notes and videos (and the images of a post)
 * become attachments; a message without text (a lone image, a sticker) gets empty text.
 */
export function translateMessage(ctx: InboundContext, data: MessageEvent): InboundMessage | undefined {
  const m = data.message;
  if (!m?.message_id || !m.chat_id) return undefined;
  const mentions = m.mentions ?? [];
  const raw = messageText(m.message_type, m.content) ?? "";
  const group = m.chat_type !== "p2p";
  const rootId = group ? m.root_id || m.message_id : undefined;
  const ref: ConversationRef = {
    channel: ctx.channel,
    key: conversationKey(ctx.channel, data.tenant_key, m.chat_id, rootId),
    chatId: m.chat_id,
    ...(data.tenant_key ? { workspace: data.tenant_key } : {}),
    replyToId: m.message_id,
    chatType: group ? "group" : "direct",
  };
  if (rootId) ref.threadId = rootId;
  const senderId = data.sender?.sender_id?.open_id ?? data.sender?.sender_id?.user_id ?? "";
  const mentionsBot = mentions.some((x) => x.id?.open_id === ctx.botOpenId);
  const inBotTopic = group && !!m.root_id && ctx.isBotTopic(m.root_id);
  const msg: InboundMessage = {
    channel: ctx.channel,
    eventId: data.event_id || m.message_id,
    ref,
    user: { id: senderId },
    text: replaceMentions(raw, mentions, ctx.botOpenId),
    mentioned: !group || mentionsBot || inBotTopic,
    sentAt: Number(m.create_time) || Date.now(),
  };
  const attachments = messageAttachments(m.message_id, m.message_type, parseContent(m.content));
  if (attachments.length) msg.attachments = attachments;
  if (data.sender?.sender_type === "app" || senderId === ctx.botOpenId) msg.fromBot = true;
  // The core knows the topic's conversation durably: a follow-up after a restart still counts.
  if (group && m.root_id) msg.inThread = true;
  return msg;
}

/** Translates a button click on one of Antler's cards, or returns undefined for foreign cards. */
export function translateClick(channel: string, data: CardActionEvent): InboundMessage | undefined {
  const value = readButtonValue(data.action?.value);
  const chatId = data.context?.open_chat_id;
  const messageId = data.context?.open_message_id;
  if (!value || !chatId || !messageId) return undefined;
  const group = value.c === "g";
  const rootId = group ? (value.t ?? messageId) : undefined;
  const ref: ConversationRef = {
    channel,
    key: conversationKey(channel, data.tenant_key, chatId, rootId),
    chatId,
    ...(data.tenant_key ? { workspace: data.tenant_key } : {}),
    replyToId: messageId,
    chatType: group ? "group" : "direct",
  };
  if (rootId) ref.threadId = rootId;
  const eventId = data.event_id || `${messageId}:${value.q}:${value.b}:${Date.now()}`;
  return {
    channel,
    eventId,
    ref,
    user: { id: data.operator?.open_id ?? data.operator?.user_id ?? "" },
    text: "",
    mentioned: true,
    // The callback's own response answers the click; the adapter finds it by the event id.
    action: { questionId: value.q, buttonId: value.b, messageId, callbackId: eventId },
    sentAt: Date.now(),
  };
}

/** The readable text of a text or post message; undefined for other kinds. */
export function messageText(type: string | undefined, content: string | undefined): string | undefined {
  const parsed = parseContent(content);
  if (parsed === undefined) return undefined;
  if (type === "text") {
    const text = (parsed as { text?: unknown }).text;
    return typeof text === "string" ? text : undefined;
  }
  if (type === "post") return postText(parsed);
  return undefined;
}

/** `message.content` is JSON in a string; undefined when it does not parse. */
function parseContent(content: string | undefined): unknown {
  try {
    return JSON.parse(content ?? "") as unknown;
  } catch {
    return undefined;
  }
}

interface PostElement {
  tag?: string;
  text?: string;
  href?: string;
  user_id?: string;
  user_name?: string;
  emoji_type?: string;
  language?: string;
}

/** A post is `{title, content: [[element…]…]}`, sometimes wrapped in a locale (`zh_cn`, `en_us`). */
function postText(parsed: unknown): string | undefined {
  let body = parsed as { title?: unknown; content?: unknown } | null;
  if (body && !Array.isArray(body.content)) {
    const locale = Object.values(body).find(
      (v) => v && typeof v === "object" && Array.isArray((v as { content?: unknown }).content),
    );
    body = (locale as typeof body) ?? null;
  }
  if (!body || !Array.isArray(body.content)) return undefined;
  const lines: string[] = [];
  if (typeof body.title === "string" && body.title.trim()) lines.push(body.title.trim());
  for (const paragraph of body.content as unknown[]) {
    if (!Array.isArray(paragraph)) continue;
    lines.push((paragraph as PostElement[]).map(postElementText).join(""));
  }
  return lines.join("\n");
}

function postElementText(el: PostElement): string {
  switch (el.tag) {
    case "text":
    case "md":
      return el.text ?? "";
    case "a":
      return el.text && el.text !== el.href ? `${el.text} (${el.href ?? ""})` : (el.href ?? "");
    case "at":
      // In received posts `user_id` holds the `@_user_N` placeholder, resolved like text mentions.
      return el.user_id ?? (el.user_name ? `@${el.user_name}` : "");
    case "code_block":
      return `\n${el.text ?? ""}\n`;
    case "emotion":
      return el.emoji_type ? `:${el.emoji_type}:` : "";
    default:
      return "";
  }
}

/** Removes the bot's `@_user_N` placeholders and shows other mentions as `@Name`. */
export function replaceMentions(text: string, mentions: Mention[], botOpenId: string): string {
  let out = text;
  // Longest keys first, so `@_user_1` does not eat the start of `@_user_10`.
  const sorted = [...mentions].filter((m) => m.key).sort((a, b) => (b.key?.length ?? 0) - (a.key?.length ?? 0));
  for (const m of sorted) {
    const key = m.key as string;
    if (m.id?.open_id === botOpenId) out = out.split(`${key} `).join("").split(key).join("");
    else out = out.split(key).join(`@${m.name ?? "user"}`);
  }
  return out.trim();
}
