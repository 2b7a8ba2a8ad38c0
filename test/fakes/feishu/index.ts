/**
 * A fake Feishu / Lark Open Platform on 127.0.0.1, for the real `@larksuiteoapi/node-sdk`
 * (`domain` points here). It serves the HTTP API (see openapi.ts), the long connection's
 * endpoint and WebSocket (pbbp2 frames, see ws-server.ts), and posts signed, encrypted webhooks.
 * Tests act as users through `userSays`, `userSendsFile` and `click`, inject faults with
 * `failNext` (and resource downloads that never answer or stall mid-body with
 * `world.downloadStalls`), and read what users see through `botMessages` and `botFiles`.
 */

import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { closeServer } from "../../../src/server/http.js";
import { composeFile, type FakeMention, type UserFileMessage } from "./compose-file.js";
import { imageFormat, resourceKeys } from "./files.js";
import type { FakeMessage } from "./model.js";
import { handleOpenApi } from "./openapi.js";
import { type FakeFile, type Fault, type FaultOp, FeishuWorld, type WorldOptions } from "./state.js";
import { sendWebhook, type WebhookResult, type WebhookSendOptions } from "./webhook-sender.js";
import { FakeWsServer, type WsAck } from "./ws-server.js";

export type { UserFileMessage } from "./compose-file.js";
export type { FakeMessage } from "./model.js";
export type { FakeFile } from "./state.js";
export { encryptPayload, signature } from "./webhook-sender.js";

/** Where a user's message goes and who sends it. */
export interface Sender {
  chatId?: string;
  chatType?: "p2p" | "group";
  /** Post inside this topic. */
  rootId?: string;
  /** Sender open_id. */
  userId?: string;
  senderType?: "user" | "app";
  /** When the message was sent (ms); now by default. An old one is what a replay looks like. */
  createdAt?: number;
}

export interface UserMessage extends Sender {
  text: string;
  /** Prefix the text with an @mention of the bot. */
  mentionBot?: boolean;
  /** Other people mentioned after the bot. */
  mentions?: Array<{ name: string; openId: string }>;
  messageType?: "text" | "post";
}

export interface Delivery {
  eventId: string;
  messageId?: string;
  via: "ws" | "webhook" | "none";
  ack?: WsAck;
  webhook?: WebhookResult;
  /** What the app answered (a card callback's toast or card). */
  answer?: unknown;
}

export type Envelope = { schema: "2.0"; header: Record<string, string>; event: Record<string, unknown> };

export const DM_CHAT = "oc_dm00000000000001";
export const GROUP_CHAT = "oc_group000000000001";
export const USER = "ou_user00000000000001";

export class FakeFeishu {
  readonly world: FeishuWorld;
  readonly ws = new FakeWsServer();
  /** How events reach the app; `none` only records the user's message. */
  via: "ws" | "webhook" | "none" = "ws";
  /** The app's webhook URL, for `via: "webhook"`. */
  webhookTarget: string | undefined;
  /** Every event envelope sent, by event_id. */
  readonly sent = new Map<string, Envelope>();
  private lastEventId: string | undefined;
  private server: Server | undefined;
  private port = 0;
  private readonly chats = new Map<string, "p2p" | "group">();

  constructor(options: Partial<WorldOptions> = {}) {
    this.world = new FeishuWorld({
      appId: "cli_a1b2c3d4e5f60718",
      appSecret: "fake-app-secret-0001",
      botOpenId: "ou_bot000000000000001",
      botName: "Antler",
      tenantKey: "tenant_fake_1",
      ...options,
    });
    // The user has a p2p chat with the bot, and the bot sits in one group, before anyone writes.
    this.addChat(DM_CHAT, "p2p");
    this.addChat(GROUP_CHAT, "group");
    this.world.people.set(USER, { available: true, p2pChat: DM_CHAT });
  }

  get options(): WorldOptions {
    return this.world.options;
  }

  /** Base URL to use as the SDK's `domain`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const env = { world: this.world, wsUrl: () => this.wsUrl() };
      handleOpenApi(env, req, res).catch((err: unknown) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: 500, msg: String(err) }));
      });
    });
    server.on("upgrade", (req, socket, head) => this.ws.upgrade(req, socket, head));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    await this.ws.close();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await closeServer(server);
  }

  failNext(op: FaultOp, fault: Fault, times = 1): void {
    this.world.failNext(op, fault, times);
  }

  /** A user writes in a chat. The message is stored (so the bot can reply to it) and its event delivered. */
  async userSays(input: UserMessage, send: WebhookSendOptions = {}): Promise<Delivery> {
    const { content, mentions, text } = this.compose(input);
    return this.emit(input, input.messageType ?? "text", content, mentions, text, send);
  }

  /**
   * A user sends a file: a photo (an `image` message, or a `post` holding the image when it has
   * a caption or mentions the bot, as Feishu's client sends it), a document (`file`) or a voice
   * note (`audio`). The bytes are stored so the bot can download them through the resource API.
   */
  async userSendsFile(input: UserFileMessage, send: WebhookSendOptions = {}): Promise<Delivery> {
    const message = composeFile(this.world, input, this.mentionsFor(input));
    return this.emit(input, message.msgType, message.content, message.mentions, message.text, send);
  }

  /** Files the bot posted (image and file messages), oldest first, as a user downloads them. */
  botFiles(chatId?: string, rootId?: string): Array<{ message: FakeMessage; file: FakeFile; name: string }> {
    return this.botMessages(chatId, rootId).flatMap((message) => {
      if (message.msgType !== "image" && message.msgType !== "file") return [];
      const file = resourceKeys(message)
        .map((k) => this.world.files.get(k))
        .find((f) => f !== undefined);
      return file ? [{ message, file, name: file.name ?? `image.${(imageFormat(file.data) ?? "/bin").split("/")[1]}` }] : [];
    });
  }

  /** Stores a user's message and delivers its `im.message.receive_v1` event. */
  private async emit(
    input: Sender,
    msgType: string,
    content: string,
    mentions: unknown[],
    text: string,
    send: WebhookSendOptions,
  ): Promise<Delivery> {
    const p2p = this.world.people.get(input.userId ?? USER)?.p2pChat;
    const chatId = input.chatId ?? (input.chatType === "group" ? GROUP_CHAT : (p2p ?? DM_CHAT));
    const chatType = this.chats.get(chatId) ?? input.chatType ?? "p2p";
    this.chats.set(chatId, chatType);
    this.world.addChat(chatId, chatType);
    const person = input.userId ?? USER;
    if (chatType === "p2p" && input.senderType !== "app") {
      this.world.people.set(person, { available: true, ...this.world.people.get(person), p2pChat: chatId });
    }
    const now = input.createdAt ?? Date.now();
    const record: FakeMessage = {
      id: this.world.id("om_"),
      chatId,
      chatType,
      inThread: !!input.rootId,
      from: "user",
      senderOpenId: input.userId ?? USER,
      msgType,
      content,
      text,
      buttons: [],
      versions: [{ text, at: now }],
      edits: 0,
      reactions: [],
      createdAt: now,
    };
    if (input.rootId) {
      record.rootId = input.rootId;
      record.parentId = input.rootId;
    }
    this.world.messages.push(record);
    const message: Record<string, unknown> = {
      message_id: record.id,
      root_id: record.rootId ?? "",
      parent_id: record.parentId ?? "",
      create_time: String(now),
      update_time: String(now),
      chat_id: chatId,
      chat_type: chatType,
      message_type: record.msgType,
      content,
      mentions,
    };
    if (input.rootId) message.thread_id = `omt_${input.rootId.slice(3)}`;
    const sender = {
      sender_id: { open_id: record.senderOpenId, union_id: `on_${record.senderOpenId.slice(3)}`, user_id: "" },
      sender_type: input.senderType ?? "user",
      tenant_key: this.options.tenantKey,
    };
    const delivery = await this.deliver(this.envelope("im.message.receive_v1", { sender, message }, now), send);
    delivery.messageId = record.id;
    return delivery;
  }

  /** A user clicks the button labelled `label` on the newest bot message showing it. */
  async click(
    label: string,
    opts: { messageId?: string; userId?: string } = {},
    send: WebhookSendOptions = {},
  ): Promise<Delivery> {
    const candidates = this.world.messages.filter(
      (m) => m.from === "bot" && (!opts.messageId || m.id === opts.messageId) && m.buttons.some((b) => b.label === label),
    );
    const message = candidates.at(-1);
    if (!message) throw new Error(`no bot message shows a button "${label}"`);
    const button = message.buttons.find((b) => b.label === label);
    const operator = { open_id: opts.userId ?? USER, union_id: "on_user", user_id: "", tenant_key: this.options.tenantKey };
    const event = {
      operator,
      token: `c-${randomBytes(8).toString("hex")}`,
      action: { tag: "button", value: button?.value },
      host: "im_message",
      context: { open_message_id: message.id, open_chat_id: message.chatId },
    };
    return this.deliver(this.envelope("card.action.trigger", event), send);
  }

  /** The same event again, with the same event_id: a platform retry. */
  async redeliver(eventId = this.lastEventId, send: WebhookSendOptions = {}): Promise<Delivery> {
    const envelope = eventId ? this.sent.get(eventId) : undefined;
    if (!envelope) throw new Error("nothing to redeliver");
    return this.deliver(envelope, send);
  }

  /** Sends an envelope over the long connection or the webhook, whichever `via` says. */
  async deliver(envelope: Envelope, send: WebhookSendOptions = {}): Promise<Delivery> {
    const eventId = envelope.header.event_id as string;
    this.sent.set(eventId, envelope);
    this.lastEventId = eventId;
    if (this.via === "none") return { eventId, via: "none" };
    if (this.via === "ws") {
      const ack = await this.ws.deliver(envelope);
      return { eventId, via: "ws", ack, answer: ack.data };
    }
    const webhook = await this.postWebhook(envelope, send);
    return { eventId, via: "webhook", webhook, answer: webhook.body };
  }

  /** The URL-verification challenge Feishu sends when a request URL is saved. */
  async verifyUrl(send: WebhookSendOptions = {}): Promise<WebhookResult> {
    const challenge = randomBytes(8).toString("hex");
    return this.postWebhook({ challenge, token: this.options.verificationToken ?? "", type: "url_verification" }, send);
  }

  async postWebhook(payload: unknown, send: WebhookSendOptions = {}): Promise<WebhookResult> {
    if (!this.webhookTarget) throw new Error("webhookTarget is not set");
    return sendWebhook(this.webhookTarget, payload, { encryptKey: this.options.encryptKey, ...send });
  }

  envelope(eventType: string, event: Record<string, unknown>, createdAt = Date.now()): Envelope {
    const header = {
      event_id: `ev_${randomBytes(12).toString("hex")}`,
      token: this.options.verificationToken ?? "",
      create_time: String(createdAt),
      event_type: eventType,
      tenant_key: this.options.tenantKey,
      app_id: this.options.appId,
    };
    return { schema: "2.0", header, event };
  }

  /** A person the app may see (open_id); `available: false` puts them outside the bot's availability. */
  addPerson(openId: string, available = true): void {
    this.world.people.set(openId, { ...this.world.people.get(openId), available });
  }

  /** A chat nobody wrote in yet; `botMember: false` for one the bot is not in. */
  addChat(chatId: string, type: "p2p" | "group", botMember = true): void {
    this.chats.set(chatId, type);
    this.world.addChat(chatId, type, botMember);
  }

  /** Bot messages, oldest first; filtered by chat and topic when given. */
  botMessages(chatId?: string, rootId?: string): FakeMessage[] {
    return this.world.messages.filter(
      (m) => m.from === "bot" && (!chatId || m.chatId === chatId) && (!rootId || m.rootId === rootId),
    );
  }

  dropSockets(): void {
    this.ws.dropAll();
  }

  private wsUrl(): string {
    // The SDK query-parses the whole URL, so a dummy parameter comes first.
    return `ws://127.0.0.1:${this.port}/ws?x=1&device_id=dev_1&service_id=7&ticket=${this.ws.issueTicket()}`;
  }

  /** The `mentions` of a message that mentions the bot and/or `mentions`, keyed `@_user_N`. */
  private mentionsFor(input: Pick<UserMessage, "mentionBot" | "mentions">): FakeMention[] {
    const people = [
      ...(input.mentionBot ? [{ name: this.options.botName, openId: this.options.botOpenId }] : []),
      ...(input.mentions ?? []),
    ];
    return people.map((p, i) => ({
      key: `@_user_${i + 1}`,
      id: { open_id: p.openId, union_id: `on_${p.openId.slice(3)}`, user_id: "" },
      name: p.name,
      tenant_key: this.options.tenantKey,
    }));
  }

  private compose(input: UserMessage): { content: string; mentions: unknown[]; text: string } {
    const mentions = this.mentionsFor(input);
    const people = mentions.map((m) => ({ name: m.name }));
    const prefix = mentions.map((m) => `${m.key} `).join("");
    const text = `${people.map((p) => `@${p.name} `).join("")}${input.text}`;
    if (input.messageType === "post") {
      const line = [
        ...mentions.map((m) => ({ tag: "at", user_id: m.key, user_name: m.name })),
        { tag: "text", text: ` ${input.text}` },
      ];
      return { content: JSON.stringify({ title: "", content: [line] }), mentions, text };
    }
    return { content: JSON.stringify({ text: `${prefix}${input.text}` }), mentions, text };
  }
}
