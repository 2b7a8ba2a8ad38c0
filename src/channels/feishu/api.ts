/**
 * The Open Platform calls the adapter makes, through the SDK's `Client`. Each call checks the
 * business `code` and maps failures with {@link mapFeishuError} (through the kit's `PlatformCalls`),
 * so callers only see typed errors.
 */
import type * as lark from "@larksuiteoapi/node-sdk";
import type { PlatformCalls } from "../kit/platform-call.js";
import type { ConversationRef } from "../types.js";
import { ensureOk, mapFeishuError } from "./map-error.js";

export type MsgType = "text" | "post" | "interactive" | "image" | "file";

/** Where a posted message landed, as far as Feishu's answer says. */
export interface PostedMessage {
  id: string;
  chatId?: string;
  /** The tenant of the bot that sent it (`sender.tenant_key`). */
  tenantKey?: string;
}

export interface ChatInfo {
  /** `p2p`, `group` or `topic`; absent when the bot is not in the chat. */
  mode?: string;
  tenantKey?: string;
  /** `normal`, `dissolved` or `dissolved_save`. */
  status?: string;
}

export interface BotInfo {
  openId: string;
  name: string;
}

export class FeishuApi {
  constructor(
    readonly client: lark.Client,
    private readonly channel: string,
    /** Maps each failed call and notes it on the channel's status. */
    private readonly calls: PlatformCalls,
  ) {}

  /**
   * Runs one SDK call, turning every failure (a business `code` included) into a typed error. A
   * call stopped through `signal` (a download's /stop or time limit) rejects with its reason.
   */
  call<T>(what: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.calls.run(what, async () => ensureOk(await fn()), signal);
  }

  /**
   * Posts into the conversation: as a reply to the user's message when there is one (in groups
   * inside its topic, so the conversation stays in one thread), else as a new chat message. A
   * ref that names a person (`extra.receiveIdType: "open_id"`, from `resolveTarget`) goes to the
   * open_id, and Feishu opens the p2p chat. `uuid` makes Feishu post it once within an hour.
   */
  async post(ref: ConversationRef, msgType: MsgType, content: string, uuid?: string): Promise<string> {
    return (await this.postMessage(ref, msgType, content, uuid)).id;
  }

  /** {@link post}, with where the message landed: its chat and the tenant it belongs to. */
  async postMessage(ref: ConversationRef, msgType: MsgType, content: string, uuid?: string): Promise<PostedMessage> {
    const replyTo = ref.replyToId ?? ref.threadId;
    const byOpenId = ref.extra?.receiveIdType === "open_id";
    const once = uuid ? { uuid } : {};
    const res =
      replyTo && !byOpenId
        ? await this.call("reply", () =>
            this.client.im.v1.message.reply({
              path: { message_id: replyTo },
              data: { content, msg_type: msgType, reply_in_thread: ref.chatType === "group", ...once },
            }),
          )
        : await this.call("send", () =>
            this.client.im.v1.message.create({
              params: { receive_id_type: byOpenId ? "open_id" : "chat_id" },
              data: { receive_id: ref.chatId, content, msg_type: msgType, ...once },
            }),
          );
    const data = res.data as { message_id?: string; chat_id?: string; sender?: { tenant_key?: string } } | undefined;
    const id = data?.message_id;
    if (!id) throw mapFeishuError(this.channel, new Error("the answer carried no message_id"), "send");
    const posted: PostedMessage = { id };
    if (data?.chat_id) posted.chatId = data.chat_id;
    if (data?.sender?.tenant_key) posted.tenantKey = data.sender.tenant_key;
    return posted;
  }

  /**
   * A chat as the bot sees it (`GET /im/v1/chats/:id`). Feishu answers a chat the bot is not in
   * with its name and status only, so `mode` is absent then.
   */
  async chatInfo(chatId: string): Promise<ChatInfo> {
    const res = await this.call("get chat", () => this.client.im.v1.chat.get({ path: { chat_id: chatId } }));
    const data = res.data;
    const info: ChatInfo = {};
    if (data?.chat_mode) info.mode = data.chat_mode;
    if (data?.tenant_key) info.tenantKey = data.tenant_key;
    if (data?.chat_status) info.status = data.chat_status;
    return info;
  }

  /** Replaces an interactive card sent with `update_multi: true`. */
  async patchCard(messageId: string, card: unknown): Promise<void> {
    await this.call("update card", () =>
      this.client.im.v1.message.patch({ path: { message_id: messageId }, data: { content: JSON.stringify(card) } }),
    );
  }

  /** Edits a text message (at most 20 edits per message on the platform). */
  async editText(messageId: string, text: string): Promise<void> {
    await this.call("edit text", () =>
      this.client.im.v1.message.update({
        path: { message_id: messageId },
        data: { msg_type: "text", content: JSON.stringify({ text }) },
      }),
    );
  }

  async createCard(card: unknown): Promise<string> {
    const res = await this.call("create card", () =>
      this.client.cardkit.v1.card.create({ data: { type: "card_json", data: JSON.stringify(card) } }),
    );
    const id = res.data?.card_id;
    if (!id) throw mapFeishuError(this.channel, new Error("the answer carried no card_id"), "create card");
    return id;
  }

  async streamContent(cardId: string, elementId: string, content: string, sequence: number): Promise<void> {
    await this.call("stream card", () =>
      this.client.cardkit.v1.cardElement.content({
        path: { card_id: cardId, element_id: elementId },
        data: { content, sequence },
      }),
    );
  }

  async closeStreaming(cardId: string, sequence: number): Promise<void> {
    await this.call("close card stream", () =>
      this.client.cardkit.v1.card.settings({
        path: { card_id: cardId },
        data: { settings: JSON.stringify({ config: { streaming_mode: false } }), sequence },
      }),
    );
  }

  /** Adds elements to a CardKit card right after the element `afterId`. */
  async addElements(cardId: string, afterId: string, elements: unknown[], sequence: number): Promise<void> {
    await this.call("add card element", () =>
      this.client.cardkit.v1.cardElement.create({
        path: { card_id: cardId },
        data: { type: "insert_after", target_element_id: afterId, elements: JSON.stringify(elements), sequence },
      }),
    );
  }

  /** Replaces one element of a CardKit card, found by its `element_id`. */
  async replaceElement(cardId: string, elementId: string, element: unknown, sequence: number): Promise<void> {
    await this.call("update card element", () =>
      this.client.cardkit.v1.cardElement.update({
        path: { card_id: cardId, element_id: elementId },
        data: { element: JSON.stringify(element), sequence },
      }),
    );
  }

  async deleteElement(cardId: string, elementId: string, sequence: number): Promise<void> {
    await this.call("delete card element", () =>
      this.client.cardkit.v1.cardElement.delete({ path: { card_id: cardId, element_id: elementId }, data: { sequence } }),
    );
  }

  /** Replaces a whole CardKit card (cards sent by card_id ignore message PATCH). */
  async replaceCard(cardId: string, card: unknown, sequence: number): Promise<void> {
    await this.call("update card entity", () =>
      this.client.cardkit.v1.card.update({
        path: { card_id: cardId },
        data: { card: { type: "card_json", data: JSON.stringify(card) }, sequence },
      }),
    );
  }

  async addReaction(messageId: string, emoji: string): Promise<string | undefined> {
    const res = await this.call("add reaction", () =>
      this.client.im.v1.messageReaction.create({
        path: { message_id: messageId },
        data: { reaction_type: { emoji_type: emoji } },
      }),
    );
    return res.data?.reaction_id;
  }

  async removeReaction(messageId: string, reactionId: string): Promise<void> {
    await this.call("remove reaction", () =>
      this.client.im.v1.messageReaction.delete({ path: { message_id: messageId, reaction_id: reactionId } }),
    );
  }

  /** Fetches a tenant token directly (not from the SDK's cache), to prove the credentials work. */
  async tenantToken(appId: string, appSecret: string): Promise<{ expire: number }> {
    const res = await this.call("get tenant token", () =>
      this.client.auth.v3.tenantAccessToken.internal({ data: { app_id: appId, app_secret: appSecret } }),
    );
    const body = res as { tenant_access_token?: string; expire?: number };
    if (!body.tenant_access_token) throw mapFeishuError(this.channel, new Error("no token in the answer"), "get tenant token");
    return { expire: body.expire ?? 0 };
  }

  async botInfo(): Promise<BotInfo> {
    const res = await this.call("get bot info", () =>
      this.client.request<{ code?: number; msg?: string; bot?: { open_id?: string; app_name?: string } }>({
        method: "GET",
        url: "/open-apis/bot/v3/info",
      }),
    );
    const openId = res.bot?.open_id;
    if (!openId) throw mapFeishuError(this.channel, new Error("no bot.open_id in the answer"), "get bot info");
    return { openId, name: res.bot?.app_name ?? "bot" };
  }
}
