/**
 * Inbound translation: DingTalk robot messages and card clicks → InboundMessage (checked first
 * by webhook-check.ts). Pure functions, so the table in README.md is testable.
 */
import type { ConversationRef, InboundMessage, JsonValue } from "../types.js";
import { attachmentsOf, type RobotContent } from "./attachments.js";
import type { CardClickParams } from "./card.js";

/** A robot message as DingTalk delivers it (stream data or HTTP callback body). */
export interface RobotMessage {
  conversationId: string;
  /** "1" one-to-one, "2" group. */
  conversationType: string;
  msgId: string;
  msgtype: string;
  text?: { content?: string };
  /** Rich text, pictures, files, audio and video (see attachments.ts). */
  content?: RobotContent;
  senderId: string;
  senderNick?: string;
  senderStaffId?: string;
  senderCorpId?: string;
  chatbotUserId?: string;
  chatbotCorpId?: string;
  robotCode?: string;
  isInAtList?: boolean;
  sessionWebhook?: string;
  sessionWebhookExpiredTime?: number;
  createAt?: number;
}

export type SessionScope = "user" | "chat";

/** The sender's id as Antler uses it: the staff id (what admins list), else the opaque sender id. */
export function senderOf(msg: RobotMessage): string {
  return msg.senderStaffId || msg.senderId;
}

/** Builds the conversation key; see the table in README.md. */
export function conversationKey(
  name: string,
  corp: string,
  chat: { direct: boolean; cid: string; user: string; scope: SessionScope },
) {
  if (chat.direct) return `${name}:${corp}:${chat.user}`;
  return chat.scope === "user" ? `${name}:${corp}:${chat.cid}:${chat.user}` : `${name}:${corp}:${chat.cid}`;
}

/** What the user wrote: a text, or the text runs of rich text. A voice note's transcript stays in its attachment. */
function messageText(msg: RobotMessage): string {
  if (msg.msgtype === "text") return msg.text?.content ?? "";
  if (msg.msgtype === "richText") return (msg.content?.richText ?? []).map((p) => p.text ?? "").join("");
  return "";
}

/**
 * Translates a robot message. Pictures, files, voice notes and videos reach the core with empty
 * text and their attachments; rich text keeps its text runs as text and its pictures as attachments.
 */
export function robotMessageToInbound(name: string, scope: SessionScope, msg: RobotMessage): InboundMessage | undefined {
  const raw = messageText(msg);
  const attachments = attachmentsOf(msg.msgtype, msg.content);
  const direct = msg.conversationType === "1";
  const user = senderOf(msg);
  const corp = msg.chatbotCorpId || msg.senderCorpId || "-";
  const extra: { [k: string]: JsonValue } = {};
  if (msg.sessionWebhook) extra.sessionWebhook = msg.sessionWebhook;
  if (msg.sessionWebhookExpiredTime) extra.sessionWebhookExpiredTime = msg.sessionWebhookExpiredTime;
  if (msg.senderStaffId) extra.staffId = msg.senderStaffId;
  if (msg.robotCode) extra.robotCode = msg.robotCode;
  const ref: ConversationRef = {
    channel: name,
    key: conversationKey(name, corp, { direct, cid: msg.conversationId, user, scope }),
    chatId: msg.conversationId,
    chatType: direct ? "direct" : "group",
    ...(corp !== "-" ? { workspace: corp } : {}),
    replyToId: msg.msgId,
    extra,
  };
  const fromBot =
    msg.chatbotUserId !== undefined && (msg.senderId === msg.chatbotUserId || msg.senderStaffId === msg.chatbotUserId);
  return {
    channel: name,
    eventId: msg.msgId,
    ref,
    user: msg.senderNick ? { id: user, name: msg.senderNick } : { id: user },
    // DingTalk removes "@robot" from the text but leaves the space that followed it.
    text: raw.trim(),
    // Groups deliver only messages that @mention the robot.
    mentioned: direct || msg.isInAtList !== false,
    ...(fromBot ? { fromBot: true } : {}),
    ...(attachments.length ? { attachments } : {}),
    sentAt: typeof msg.createAt === "number" ? msg.createAt : Date.now(),
  };
}

/** A card button click as the card callback topic delivers it. */
export interface CardCallback {
  outTrackId?: string;
  userId?: string;
  corpId?: string;
  content?: string;
}

/** Decodes a click on one of our card buttons; undefined when it is not ours. */
export function cardClickToInbound(
  name: string,
  eventId: string,
  data: CardCallback,
  known: ConversationRef | undefined,
): InboundMessage | undefined {
  let params: Partial<CardClickParams> | undefined;
  try {
    const content = JSON.parse(data.content ?? "{}") as { cardPrivateData?: { params?: Partial<CardClickParams> } };
    params = content.cardPrivateData?.params;
  } catch {
    return undefined;
  }
  if (!params?.q || !params.b || !params.k || !params.c || !data.userId) return undefined;
  const ref: ConversationRef = known ?? {
    channel: name,
    key: params.k,
    chatId: params.c,
    chatType: params.t === "direct" ? "direct" : "group",
    extra: params.s ? { staffId: params.s } : {},
  };
  return {
    channel: name,
    eventId,
    ref,
    user: { id: data.userId },
    text: "",
    mentioned: true,
    action: { questionId: params.q, buttonId: params.b, ...(data.outTrackId ? { messageId: data.outTrackId } : {}) },
    sentAt: Date.now(),
  };
}
