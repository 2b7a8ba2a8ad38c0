/**
 * Feishu / Lark channel: events over the SDK's long connection (`WSClient`) or a webhook on
 * Antler's HTTP server; replies as cards, streamed through CardKit. See README.md in this folder
 * for the conversation-key mapping and the choices made.
 */
import * as lark from "@larksuiteoapi/node-sdk";
import { ChannelError, PlatformAuthError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { accessRulesFrom } from "../kit/access.js";
import { ClickHolds } from "../kit/click-holds.js";
import { LifecycleChannel, type OpenResult } from "../kit/lifecycle.js";
import { PlatformCalls } from "../kit/platform-call.js";
import { RecentMap, RecentSet } from "../kit/recent.js";
import { mountWebhook } from "../kit/webhook-route.js";
import type {
  AccessRules,
  Channel,
  ChannelCapabilities,
  ChannelContext,
  ConversationRef,
  DownloadOptions,
  InboundAttachment,
  InboundMessage,
  InboundSink,
  MessageHandle,
  NativeStream,
  NativeStreamLimits,
  OutboundContent,
  OutboundFile,
  SendOptions,
  SendTarget,
} from "../types.js";
import { FeishuApi } from "./api.js";
import { readButtonValue } from "./cards.js";
import { FEISHU_RENAMES, FeishuChannelConfig } from "./config.js";
import { downloadAttachment, MAX_UPLOAD_BYTES, postFile } from "./files.js";
import { feishuEmitter } from "./format.js";
import { type CardActionEvent, type MessageEvent, translateClick, translateMessage } from "./inbound.js";
import { mapFeishuError } from "./map-error.js";
import { FeishuOutbound } from "./outbound.js";
import { sdkLogger } from "./sdk-logger.js";
import { CardKitStream, CardSequences } from "./stream.js";
import { feishuUuid, resolveFeishuTarget } from "./targets.js";
import { feishuWebhookHandler } from "./transport-webhook.js";
import { LongConnection } from "./transport-websocket.js";

export { FeishuChannelConfig } from "./config.js";

/** Card markdown of one card (as converted); a card must stay under 30 KB even when every character takes 3 bytes. */
const MAX_CARD_TEXT = 9000;
/** Streaming mode closes itself after 10 minutes; rotate to a new card before that. */
const MAX_STREAM_MS = 9 * 60_000;
const TYPING_EMOJI = "Typing";
/** How long a click's callback waits for the core's verdict; Feishu wants the answer within 3 s. */
const CLICK_HOLD_MS = 2000;

export class FeishuChannel extends LifecycleChannel implements Channel {
  static readonly configSchema = FeishuChannelConfig;
  static readonly configRenames = FEISHU_RENAMES;

  readonly capabilities: ChannelCapabilities;
  readonly streamLimits: NativeStreamLimits = { maxTextLength: MAX_CARD_TEXT, maxDurationMs: MAX_STREAM_MS };
  readonly access: AccessRules;
  /** `/im/v1/files` takes at most 30 MB. */
  readonly maxUploadBytes = MAX_UPLOAD_BYTES;

  private readonly config: FeishuChannelConfig;
  private readonly logger: Logger;
  private readonly ctx: ChannelContext<FeishuChannelConfig>;
  private readonly sequences = new CardSequences();
  /** Topic roots the bot took part in: follow-ups there address the bot without a mention. */
  private readonly botTopics = new RecentSet(5000);
  /** Typing reactions by the user's message id; a typing that never got its typingDone is forgotten past 1000. */
  private readonly reactions = new RecentMap<Promise<string | undefined>>(1000);
  /** Clicks whose callback response waits for the core, so a refusal can be a toast. */
  private readonly clicks = new ClickHolds();
  private api: FeishuApi | undefined;
  private outbound: FeishuOutbound | undefined;
  private connection: LongConnection | undefined;
  private botOpenId = "";
  /** This app's tenant, once an event or a lookup named it. */
  private tenantKey: string | undefined;
  /** People's p2p chats (open_id → chat_id), learned from their messages. */
  private readonly p2pChats = new RecentMap<string>(5000);

  constructor(ctx: ChannelContext<FeishuChannelConfig>) {
    const config = FeishuChannelConfig.parse(ctx.config ?? {});
    super(ctx.name, config.mode, { exclusive: config.mode === "websocket" });
    this.ctx = ctx;
    this.config = config;
    this.logger = ctx.logger;
    this.access = accessRulesFrom(this.config);
    this.capabilities = {
      maxTextLength: MAX_CARD_TEXT,
      minEditIntervalMs: this.config.edit_interval_ms,
      edits: true,
      buttons: true,
      threads: true,
      markdown: feishuEmitter,
      maxButtons: 10,
      // The reaction stays until typingDone removes it; repeating it is a no-op.
      typingIntervalMs: 60_000,
      // The reply card shows the progress view as a section under the text (progress.ts).
      progressView: true,
    };
  }

  /** Learns the bot's open_id, then mounts the webhook or opens the long connection. */
  protected async open(sink: InboundSink, signal: AbortSignal): Promise<OpenResult | undefined> {
    const api = this.ensureApi();
    if (this.config.mode === "websocket") this.checkAppIdForm();
    const bot = await api.botInfo();
    if (signal.aborted) return undefined;
    this.botOpenId = bot.openId;
    const dispatcher = this.dispatcher(sink);
    if (this.config.mode === "webhook") {
      this.mountWebhook(dispatcher);
      return undefined;
    }
    return this.connect(dispatcher);
  }

  /** Closes the long connection; the API client still sends and edits. */
  protected override async closeIntake(): Promise<void> {
    this.connection?.close();
    this.connection = undefined;
  }

  /** Closes the long connection and takes the route down; safe to call more than once. */
  protected async close(): Promise<void> {
    await this.closeIntake();
    this.ctx.http.unroute();
    this.reactions.clear();
    this.clicks.releaseAll();
  }

  /** The handle's ref is where the message landed: for a ref from `resolveTarget`, store it (see targets.ts). */
  async send(ref: ConversationRef, content: OutboundContent, options?: SendOptions): Promise<MessageHandle> {
    const handle = await this.out().send(ref, content, feishuUuid(options?.idempotencyKey));
    this.noteSent(handle.ref);
    return handle;
  }

  /** A chat (by chat_id, a topic by its root message id) or a person (by open_id); see targets.ts. */
  async resolveTarget(target: SendTarget): Promise<ConversationRef> {
    const memory = { tenantKey: () => this.tenantKey, p2pChat: (openId: string) => this.p2pChats.get(openId) };
    const ref = await resolveFeishuTarget(this.name, this.ensureApi(), memory, target);
    if (ref.workspace) this.tenantKey ??= ref.workspace;
    return ref;
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    await this.out().edit(handle, content);
  }

  /** Reads an attachment through the message-resource API, at most `maxBytes` of it. */
  async download(
    _msg: InboundMessage,
    attachment: InboundAttachment,
    maxBytes: number,
    options?: DownloadOptions,
  ): Promise<Uint8Array> {
    return downloadAttachment(this.ensureApi(), this.name, attachment, maxBytes, options?.signal);
  }

  /** Uploads the file and posts it where replies go (in groups, inside the topic). */
  async sendFile(ref: ConversationRef, file: OutboundFile, options?: SendOptions): Promise<MessageHandle> {
    const handle = await postFile(this.ensureApi(), this.name, ref, file, feishuUuid(options?.idempotencyKey));
    this.noteSent(handle.ref);
    return handle;
  }

  /** Falls back (returns undefined) when the card cannot be created or sent; the core then uses send/edit. */
  async startStream(ref: ConversationRef): Promise<NativeStream | undefined> {
    try {
      const stream = await CardKitStream.open(this.ensureApi(), ref, this.sequences, this.logger);
      this.noteTopic(ref);
      return stream;
    } catch (err) {
      this.logger.warn({ err }, "could not start a CardKit stream; falling back to card edits");
      return undefined;
    }
  }

  async typing(ref: ConversationRef): Promise<void> {
    const messageId = ref.replyToId;
    if (!messageId || this.reactions.has(messageId)) return;
    const added = this.ensureApi()
      .addReaction(messageId, TYPING_EMOJI)
      .catch((err: unknown) => {
        this.logger.debug({ err }, "typing reaction failed");
        return undefined;
      });
    this.reactions.set(messageId, added);
    await added;
  }

  async typingDone(ref: ConversationRef): Promise<void> {
    const messageId = ref.replyToId;
    const pending = messageId ? this.reactions.get(messageId) : undefined;
    if (!messageId || !pending) return;
    this.reactions.delete(messageId);
    const reactionId = await pending;
    if (!reactionId) return;
    await this.ensureApi()
      .removeReaction(messageId, reactionId)
      .catch((err: unknown) => this.logger.debug({ err }, "removing the typing reaction failed"));
  }

  /** Answers a click held open: `notice` becomes the callback's toast, which only the clicker sees. */
  async answerAction(msg: InboundMessage, notice?: string): Promise<boolean> {
    return this.clicks.answer(msg.action?.callbackId, notice);
  }

  /** Proves the credentials: a fresh tenant token, then the bot's own info. */
  async check(): Promise<string> {
    const api = this.ensureApi();
    const { appId, appSecret } = this.credentials();
    await api.tenantToken(appId, appSecret);
    const bot = await api.botInfo();
    return `bot "${bot.name}" (${bot.openId}) on ${this.config.api_base}, ${this.config.mode} mode`;
  }

  private dispatcher(sink: InboundSink): lark.EventDispatcher {
    const dispatcher = new lark.EventDispatcher({ logger: sdkLogger(this.logger), loggerLevel: lark.LoggerLevel.info });
    return dispatcher.register<Record<string, (data: never) => Promise<unknown>>>({
      "im.message.receive_v1": async (data: MessageEvent) => {
        const msg = translateMessage(
          { channel: this.name, botOpenId: this.botOpenId, isBotTopic: (id) => this.botTopics.has(id) },
          data,
        );
        if (!msg) return undefined;
        this.learn(msg, data.sender?.sender_id?.open_id);
        if (msg.mentioned && !msg.fromBot) this.noteTopic(msg.ref);
        await sink(msg);
        return undefined;
      },
      "card.action.trigger": async (data: CardActionEvent) => {
        const msg = translateClick(this.name, data);
        if (!msg) return {};
        return this.takeClick(msg, sink, readButtonValue(data.action?.value)?.l);
      },
    });
  }

  /** Hands a click to the core and answers with a toast: the core's refusal, or what was selected. */
  private async takeClick(msg: InboundMessage, sink: InboundSink, label: string | undefined): Promise<unknown> {
    const id = msg.action?.callbackId ?? msg.eventId;
    const verdict = this.clicks.hold(id, CLICK_HOLD_MS);
    try {
      await sink(msg);
    } catch (err) {
      this.clicks.answer(id);
      throw err;
    }
    const { notice, expired } = await verdict;
    if (notice) return { toast: { type: "error", content: notice } };
    // Not decided in time (a busy conversation, a redelivery): say only that it arrived.
    if (expired) return { toast: { type: "info", content: "Received" } };
    return { toast: { type: "success", content: label ? `Selected: ${label}` : "Received" } };
  }

  private mountWebhook(dispatcher: lark.EventDispatcher): void {
    if (!this.config.encrypt_key && !this.config.verification_token) {
      throw new ChannelError(
        this.name,
        "config_missing",
        `webhook mode needs channels.${this.name}.verification_token or encrypt_key, so forged events can be refused`,
      );
    }
    const handler = feishuWebhookHandler({
      encryptKey: this.config.encrypt_key || undefined,
      verificationToken: this.config.verification_token || undefined,
      dispatch: (envelope) => dispatcher.invoke(envelope, { needCheck: false }),
      onRejected: (reason) => this.life.noteError(new Error(`webhook request rejected: ${reason}`)),
    });
    // `/webhooks/<name>` was this adapter's path from the start: no older path to keep.
    mountWebhook(this.ctx.http, this.name, handler);
  }

  /** Opens the long connection; still retrying after the wait for it, the channel starts degraded. */
  private async connect(dispatcher: lark.EventDispatcher): Promise<OpenResult | undefined> {
    const { appId, appSecret } = this.credentials();
    const connection = new LongConnection({
      appId,
      appSecret,
      domain: this.domainValue(),
      logger: this.logger,
      onError: (err) => this.life.noteError(err),
      onState: (up, reason) => (up ? this.life.connected() : this.life.degraded(reason ?? "the long connection is down")),
    });
    this.connection = connection;
    await connection.start(dispatcher);
    return !connection.connected && connection.reason ? { degraded: connection.reason } : undefined;
  }

  /** The SDK's long connection silently does nothing for any other form, so say it up front. */
  private checkAppIdForm(): void {
    const { appId } = this.credentials();
    if (!/^cli_[0-9a-fA-F]{16}$/.test(appId)) {
      throw new ChannelError(
        this.name,
        "config_invalid",
        `channels.${this.name}.app_id must be "cli_" and 16 hex digits for the long connection (got "${appId}")`,
      );
    }
  }

  private ensureApi(): FeishuApi {
    if (this.api) return this.api;
    const { appId, appSecret } = this.credentials();
    const client = new lark.Client({
      appId,
      appSecret,
      domain: this.domainValue(),
      // A cache of our own: the SDK's default is shared by every client with the same app id.
      cache: new lark.DefaultCache(),
      logger: sdkLogger(this.logger),
      loggerLevel: lark.LoggerLevel.info,
    });
    this.api = new FeishuApi(client, this.name, new PlatformCalls(this.name, mapFeishuError, this.life));
    this.outbound = new FeishuOutbound(this.api, this.sequences, this.logger);
    return this.api;
  }

  private out(): FeishuOutbound {
    this.ensureApi();
    return this.outbound as FeishuOutbound;
  }

  private credentials(): { appId: string; appSecret: string } {
    const appId = this.config.app_id?.trim();
    const appSecret = this.config.app_secret?.trim();
    if (!appId) throw this.missing("app_id", "FEISHU_APP_ID");
    if (!appSecret) throw this.missing("app_secret", "FEISHU_APP_SECRET");
    return { appId, appSecret };
  }

  private missing(key: string, env: string): PlatformAuthError {
    return new PlatformAuthError(this.name, `channels.${this.name}.${key} is required: set ${env} or write it in config.yaml`);
  }

  private domainValue(): lark.Domain | string {
    const d = this.config.api_base;
    if (d === "feishu") return lark.Domain.Feishu;
    if (d === "lark") return lark.Domain.Lark;
    return d.replace(/\/+$/, "");
  }

  /** Remembers what a message says about the tenant and a person's p2p chat, for `resolveTarget`. */
  private learn(msg: InboundMessage, openId: string | undefined): void {
    if (msg.ref.workspace) this.tenantKey ??= msg.ref.workspace;
    if (msg.ref.chatType === "direct" && openId && !msg.fromBot) this.p2pChats.set(openId, msg.ref.chatId);
  }

  /** After a send: a settled p2p ref teaches the person's chat, a group ref its topic. */
  private noteSent(ref: ConversationRef): void {
    if (ref.workspace) this.tenantKey ??= ref.workspace;
    this.noteTopic(ref);
  }

  private noteTopic(ref: ConversationRef): void {
    if (ref.chatType === "group" && ref.threadId) this.botTopics.add(ref.threadId);
  }
}
