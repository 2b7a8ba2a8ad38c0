/**
 * Sending first on Feishu: turns a chat or a person an API caller names into a ref with the key
 * inbound messages from there get (inbound.ts), and settles the ref once Feishu says where a
 * message landed. See "Sending first" in README.md.
 */
import { createHash } from "node:crypto";
import { ChannelError, PlatformAuthError, PlatformRateLimitError, TargetUnreachableError } from "../../errors.js";
import type { ConversationRef, SendTarget } from "../types.js";
import type { FeishuApi, PostedMessage } from "./api.js";
import { conversationKey } from "./inbound.js";

/** Feishu's `uuid` holds at most 50 characters. */
const MAX_UUID = 50;

/** What the adapter knows without asking Feishu: learned from events and sends, in memory. */
export interface TargetMemory {
  /** The tenant of this app's bot, once an event or an answer named it. */
  tenantKey(): string | undefined;
  /** The p2p chat with a person (open_id), once they wrote or were written to. */
  p2pChat(openId: string): string | undefined;
}

/**
 * A ref for `target`. A chat is looked up (`GET /im/v1/chats/:id`): its mode decides the key
 * (a p2p chat is one conversation, a group message starts a topic) and its tenant the workspace.
 * A person is reached by open_id: with a p2p chat already known the ref is that chat's; else
 * Feishu opens the chat on the first send, and the handle `send` returns carries the settled ref.
 */
export async function resolveFeishuTarget(
  channel: string,
  api: FeishuApi,
  memory: TargetMemory,
  target: SendTarget,
): Promise<ConversationRef> {
  if (target.user !== undefined) return personRef(channel, memory, target.user, target.workspace);
  const chatId = target.chat.trim();
  if (!chatId) throw new TargetUnreachableError(channel, "the target names no chat_id");
  const info = await lookUp(channel, api, chatId);
  if (!info.mode) throw new TargetUnreachableError(channel, `the bot is not in chat ${chatId}`);
  if (info.status && info.status !== "normal") throw new TargetUnreachableError(channel, `chat ${chatId} is ${info.status}`);
  const tenant = info.tenantKey ?? target.workspace ?? memory.tenantKey();
  const group = info.mode !== "p2p";
  const thread = group && target.thread ? target.thread : undefined;
  const ref: ConversationRef = {
    channel,
    key: conversationKey(channel, tenant, chatId, thread),
    chatId,
    chatType: group ? "group" : "direct",
    ...(tenant ? { workspace: tenant } : {}),
  };
  if (thread) ref.threadId = thread;
  return ref;
}

function personRef(channel: string, memory: TargetMemory, user: string, workspace?: string): ConversationRef {
  const openId = user.trim();
  if (!openId) throw new TargetUnreachableError(channel, "the target names no open_id");
  const tenant = workspace ?? memory.tenantKey();
  const known = memory.p2pChat(openId);
  const ref: ConversationRef = {
    channel,
    key: conversationKey(channel, tenant, known ?? openId),
    chatId: known ?? openId,
    chatType: "direct",
    ...(tenant ? { workspace: tenant } : {}),
  };
  if (!known) ref.extra = { receiveIdType: "open_id", openId };
  return ref;
}

/** The chat lookup; Feishu's refusals (no such chat, another tenant, not a member) say the chat is out of reach. */
async function lookUp(channel: string, api: FeishuApi, chatId: string) {
  try {
    return await api.chatInfo(chatId);
  } catch (err) {
    if (err instanceof PlatformAuthError) {
      throw new PlatformAuthError(channel, `${err.message} (looking a chat up needs the im:chat:readonly scope)`, {
        cause: err,
      });
    }
    if (!(err instanceof ChannelError) || err instanceof PlatformRateLimitError) throw err;
    if (err.code === "platform_error" || err.code === "not_found") {
      throw new TargetUnreachableError(channel, err.message, { cause: err });
    }
    throw err;
  }
}

/**
 * The ref a posted message really lives in. A message sent to an open_id lands in the p2p chat
 * Feishu names in its answer; a new message in a group (no topic yet) starts a topic of its own,
 * which is the conversation people answer in. Any other ref stays as it was.
 */
export function settledRef(ref: ConversationRef, posted: PostedMessage): ConversationRef {
  const tenant = ref.workspace ?? posted.tenantKey;
  if (ref.extra?.receiveIdType === "open_id") {
    if (!posted.chatId) return ref;
    const { receiveIdType: _r, openId: _o, ...rest } = ref.extra;
    const settled: ConversationRef = {
      ...ref,
      key: conversationKey(ref.channel, tenant, posted.chatId),
      chatId: posted.chatId,
      ...(tenant ? { workspace: tenant } : {}),
    };
    if (Object.keys(rest).length) settled.extra = rest;
    else delete settled.extra;
    return settled;
  }
  if (ref.chatType === "group" && !ref.threadId && !ref.replyToId) {
    return { ...ref, key: conversationKey(ref.channel, tenant, ref.chatId, posted.id), threadId: posted.id };
  }
  return ref;
}

/** Feishu's `uuid` for an idempotency key: the key itself when it fits, else a hash of it. */
export function feishuUuid(idempotencyKey: string | undefined): string | undefined {
  if (!idempotencyKey) return undefined;
  if (idempotencyKey.length <= MAX_UUID && /^[\w.:-]+$/.test(idempotencyKey)) return idempotencyKey;
  return createHash("sha256").update(idempotencyKey).digest("base64url");
}
