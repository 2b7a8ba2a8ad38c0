/**
 * Telegram adapter: telegraf 4 against the Bot API, by long polling (default) or by a webhook
 * mounted on Antler's HTTP server. It only translates; the core streams, throttles, retries
 * and checks access. See README.md for the conversation-key mapping and the choices made.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Telegraf } from "telegraf";
import type { InlineKeyboardButton } from "telegraf/types";
import { ChannelError, errorMessage } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { HttpError, readJson } from "../../server/http.js";
import { accessRulesFrom } from "../kit/access.js";
import { LifecycleChannel } from "../kit/lifecycle.js";
import { PlatformCalls } from "../kit/platform-call.js";
import { mountWebhook, webhookPath } from "../kit/webhook-route.js";
import type {
  AccessRules,
  Channel,
  ChannelCapabilities,
  ChannelContext,
  ConversationRef,
  DownloadOptions,
  HttpMount,
  InboundAttachment,
  InboundMessage,
  InboundSink,
  MessageHandle,
  OutboundContent,
  OutboundFile,
  SendTarget,
} from "../types.js";
import { UPLOAD_LIMIT } from "./attachments.js";
import { callbackDataBytes, encodeCallbackData, MAX_CALLBACK_BYTES } from "./buttons.js";
import { ClickAnswers } from "./clicks.js";
import { DEFAULT_EDIT_INTERVAL_MS, TELEGRAM_RENAMES, TelegramChannelConfig } from "./config.js";
import { TelegramFiles } from "./files.js";
import { escapeHtml, telegramEmitter, toPlainText, toTelegramHtml } from "./format.js";
import { type BotIdentity, type TgUpdate, translateUpdate } from "./inbound.js";
import { isParseError, mapTelegramError } from "./map-error.js";
import { TelegramTargets } from "./targets.js";
import { Poller } from "./transport.js";
import { updateProblem } from "./webhook-check.js";

export { TelegramChannelConfig } from "./config.js";

const ALLOWED_UPDATES = ["message", "callback_query"];

type Keyboard = InlineKeyboardButton.CallbackButton[][];

export class TelegramChannel extends LifecycleChannel implements Channel {
  static readonly configSchema = TelegramChannelConfig;
  static readonly configRenames = TELEGRAM_RENAMES;

  readonly capabilities: ChannelCapabilities;
  readonly access: AccessRules;
  /** sendDocument's multipart limit; images past sendPhoto's 10 MB go as documents. */
  readonly maxUploadBytes = UPLOAD_LIMIT;

  private readonly config: TelegramChannelConfig;
  private readonly logger: Logger;
  private readonly http: HttpMount;
  private bot: Telegraf | undefined;
  private identity: BotIdentity | undefined;
  private sink: InboundSink | undefined;
  private poller: Poller | undefined;
  /** Webhook responses by update object, so a failed handler can answer 500 and get a redelivery. */
  private readonly responses = new WeakMap<object, ServerResponse>();
  private readonly clicks: ClickAnswers;
  private readonly files: TelegramFiles;
  private readonly targets: TelegramTargets;
  private readonly calls = new PlatformCalls(this.name, mapTelegramError, this.life);

  constructor(ctx: ChannelContext<TelegramChannelConfig>) {
    super(ctx.name, ctx.config.mode, { exclusive: ctx.config.mode === "polling" });
    this.config = ctx.config;
    this.logger = ctx.logger;
    this.http = ctx.http;
    this.access = accessRulesFrom(ctx.config);
    this.capabilities = {
      maxTextLength: 4096,
      minEditIntervalMs: ctx.config.edit_interval_ms ?? DEFAULT_EDIT_INTERVAL_MS.direct,
      edits: true,
      buttons: true,
      threads: true,
      markdown: telegramEmitter,
      maxButtons: 10,
      typingIntervalMs: 4500,
    };
    this.clicks = new ClickAnswers(() => this.telegram(), this.logger);
    this.files = new TelegramFiles(this.name, () => this.telegram(), this.logger, this.calls);
    this.targets = new TelegramTargets(
      this.name,
      () => this.telegram(),
      () => this.identity,
      this.calls,
    );
  }

  /** Identifies the bot, then polls or sets the webhook; a stop meanwhile aborts `signal`. */
  protected async open(sink: InboundSink, signal: AbortSignal): Promise<void> {
    this.sink = sink;
    const bot = this.createBot();
    this.identity = await this.identify(bot);
    if (signal.aborted) return;
    this.handleUpdates(bot);
    this.bot = bot;
    await this.startTransport(bot);
    this.logger.info({ mode: this.config.mode, bot: this.identity.username }, "telegram channel started");
  }

  /** Releases the poller, the route and held clicks; safe to call more than once. */
  protected async close(): Promise<void> {
    this.http.unroute();
    this.clicks.releaseAll();
    this.bot = undefined;
    await this.closeIntake();
  }

  /** Ends the poll loop (an open getUpdates is aborted); the bot still sends and edits. */
  protected override async closeIntake(): Promise<void> {
    const poller = this.poller;
    this.poller = undefined;
    await poller?.stop();
  }

  /** Answers a click held open for the core: `notice` shows as an alert to the clicker alone. */
  answerAction(msg: InboundMessage, notice?: string): Promise<boolean> {
    return this.clicks.answerAction(msg, notice);
  }

  /** A chat or user id → the ref its messages get, checked with getChat (targets.ts). */
  resolveTarget(target: SendTarget): Promise<ConversationRef> {
    return this.targets.resolve(target);
  }

  /** Telegram takes no idempotency key, so `SendOptions` is not read (see README "Sending first"). */
  async send(ref: ConversationRef, content: OutboundContent): Promise<MessageHandle> {
    const keyboard = this.keyboard(content);
    const extra = {
      ...(keyboard ? { reply_markup: { inline_keyboard: keyboard } } : {}),
      ...(ref.threadId ? { message_thread_id: Number(ref.threadId) } : {}),
      ...(ref.replyToId ? { reply_parameters: { message_id: Number(ref.replyToId), allow_sending_without_reply: true } } : {}),
      link_preview_options: { is_disabled: true },
    };
    const telegram = this.telegram();
    const sent = await this.withPlainRetry(
      "sendMessage",
      () => telegram.sendMessage(ref.chatId, this.html(content.text), { ...extra, parse_mode: "HTML" }),
      () => telegram.sendMessage(ref.chatId, this.plain(content.text), extra),
    );
    const handle: MessageHandle = { id: String(sent.message_id), ref };
    if (keyboard) handle.extra = { keyboard: keyboard as unknown as JsonKeyboard };
    return handle;
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    // Telegram drops an inline keyboard that an edit does not repeat, so keep the one sent
    // unless the caller gave new buttons (an empty list removes them).
    const keyboard = content.buttons ? this.keyboard(content) : (handle.extra?.keyboard as unknown as Keyboard | undefined);
    const extra = {
      ...(keyboard ? { reply_markup: { inline_keyboard: keyboard } } : {}),
      link_preview_options: { is_disabled: true },
    };
    const telegram = this.telegram();
    const id = Number(handle.id);
    const chat = handle.ref.chatId;
    await this.withPlainRetry(
      "editMessageText",
      () => telegram.editMessageText(chat, id, undefined, this.html(content.text), { ...extra, parse_mode: "HTML" }),
      () => telegram.editMessageText(chat, id, undefined, this.plain(content.text), extra),
    );
  }

  /** The file of `attachment` (a file_id from the message), read up to `maxBytes`. */
  download(
    _msg: InboundMessage,
    attachment: InboundAttachment,
    maxBytes: number,
    options?: DownloadOptions,
  ): Promise<Uint8Array> {
    return this.files.download(attachment, maxBytes, options?.signal);
  }

  sendFile(ref: ConversationRef, file: OutboundFile): Promise<MessageHandle> {
    return this.files.sendFile(ref, file);
  }

  async typing(ref: ConversationRef): Promise<void> {
    try {
      await this.telegram().sendChatAction(ref.chatId, "typing", ref.threadId ? { message_thread_id: Number(ref.threadId) } : {});
    } catch (err) {
      // A missing typing indicator is harmless; the reply itself will report real trouble.
      this.logger.debug({ err: errorMessage(err) }, "sendChatAction failed");
    }
  }

  editIntervalMs(ref: ConversationRef): number {
    return this.config.edit_interval_ms ?? DEFAULT_EDIT_INTERVAL_MS[ref.chatType];
  }

  async check(): Promise<string> {
    const bot = this.bot ?? this.createBot();
    try {
      const me = await bot.telegram.getMe();
      return `@${me.username} (bot id ${me.id}, ${this.config.mode} mode)`;
    } catch (err) {
      throw mapTelegramError(this.name, err, "getMe");
    }
  }

  // ---- inbound ----

  private async onUpdate(update: TgUpdate): Promise<void> {
    const sink = this.sink;
    if (!this.identity || !sink) return;
    const translated = translateUpdate(this.name, this.identity, update);
    if (!translated) return;
    if (translated.kind === "message") return sink(translated.message);
    if (!translated.message) return this.clicks.answer(translated.queryId);
    await this.clicks.take(translated.queryId, translated.message, sink);
  }

  // ---- transports ----

  /** getMe: who the bot is (telegraf needs it to read commands and mentions). */
  private async identify(bot: Telegraf): Promise<BotIdentity> {
    try {
      const me = await bot.telegram.getMe();
      bot.botInfo = me;
      return { id: me.id, username: me.username };
    } catch (err) {
      throw mapTelegramError(this.name, err, "getMe");
    }
  }

  /** Every update goes to `onUpdate`; one it fails on answers its webhook request with 500, so Telegram sends it again. */
  private handleUpdates(bot: Telegraf): void {
    bot.catch((err, ctx) => {
      const res = this.responses.get(ctx.update);
      if (res && !res.headersSent) res.statusCode = 500;
      throw err;
    });
    bot.use((ctx) => this.onUpdate(ctx.update as unknown as TgUpdate));
  }

  private async startTransport(bot: Telegraf): Promise<void> {
    const webhook = this.config.mode === "webhook";
    try {
      if (webhook) await this.startWebhook(bot);
      else await this.startPolling(bot);
    } catch (err) {
      throw mapTelegramError(this.name, err, webhook ? "setWebhook" : "deleteWebhook");
    }
  }

  private async startPolling(bot: Telegraf): Promise<void> {
    await bot.telegram.deleteWebhook({ drop_pending_updates: false });
    const poller = new Poller(
      bot.telegram,
      {
        handle: (update) => bot.handleUpdate(update as never),
        connected: () => this.life.connected(),
        failed: (err, retryInMs, where) => this.pollFailed(err, retryInMs, where),
      },
      { timeoutSeconds: 50, allowedUpdates: ALLOWED_UPDATES },
    );
    this.poller = poller;
    poller.start();
  }

  private pollFailed(err: unknown, retryInMs: number, where: "poll" | "handle"): boolean {
    if (where === "handle") {
      // The poll itself worked: Telegram is reachable, the core could not take the update.
      const message = `[${this.name}] an update was not recorded (fetched again in ${retryInMs} ms): ${errorMessage(err)}`;
      this.life.noteError(message);
      this.life.degraded(message, true);
      this.logger.warn({ err: errorMessage(err), retryInMs }, "telegram update not recorded");
      return true;
    }
    const mapped = mapTelegramError(this.name, err, "getUpdates");
    const fatal = mapped.code === "auth_failed";
    this.life.noteError(mapped);
    if (fatal) this.life.failed(mapped);
    else this.life.degraded(mapped.message);
    this.logger.warn({ err: mapped.message, retryInMs: fatal ? undefined : retryInMs }, "telegram polling failed");
    return !fatal;
  }

  private async startWebhook(bot: Telegraf): Promise<void> {
    const { url, alias } = this.webhookTarget();
    const secretToken = this.config.webhook_secret as string;
    const callback = bot.webhookCallback(webhookPath(this.name), { secretToken });
    mountWebhook(this.http, this.name, (req, res) => this.onWebhook(callback, req, res), [alias]);
    await bot.telegram.setWebhook(url, { secret_token: secretToken, allowed_updates: ALLOWED_UPDATES as never });
  }

  private async onWebhook(
    callback: WebhookCallback,
    req: IncomingMessage & { body?: unknown },
    res: ServerResponse,
  ): Promise<void> {
    // Over server.max_body_bytes: 413; not JSON or not an Update: 400. Both are thrown as
    // HttpError: the server answers and logs them (rate-limited), and Telegraf never sees them.
    const update = await readJson(req);
    const problem = updateProblem(update);
    if (problem) throw new HttpError(400, `not a Telegram update: ${problem}`);
    this.responses.set(update as object, res);
    req.body = update;
    // Our server routed by path already (the alias too); Telegraf compares req.url (query
    // included) with the path exactly, so a webhook_url with a query string would get 403
    // forever. Only its secret check should decide.
    req.url = webhookPath(this.name);
    try {
      await callback(req as Parameters<WebhookCallback>[0], res);
    } catch (err) {
      // Telegraf already answered 500 (set in bot.catch), so Telegram delivers the update again.
      this.logger.warn({ err: errorMessage(err) }, "telegram update not recorded; Telegram will redeliver");
    }
  }

  /**
   * The public URL given to setWebhook, and the path of `webhook_url` when it is not the core's
   * `/webhooks/<name>`: it stays mounted as an alias, so a URL registered before keeps working.
   */
  private webhookTarget(): { url: string; alias: string | undefined } {
    let url: URL;
    try {
      url = new URL(this.config.webhook_url as string);
    } catch {
      throw new ChannelError(
        this.name,
        "config_invalid",
        `channels.${this.name}.webhook_url is not a URL: write the full https:// address`,
      );
    }
    if (url.pathname === "/" || url.pathname === "") url.pathname = webhookPath(this.name);
    return { url: url.toString(), alias: url.pathname };
  }

  // ---- helpers ----

  private createBot(): Telegraf {
    const token = this.config.bot_token;
    if (!token) {
      throw new ChannelError(
        this.name,
        "config_missing",
        `channels.${this.name}.bot_token is required: set TELEGRAM_BOT_TOKEN or write it in config.yaml`,
      );
    }
    if (this.config.mode === "webhook") {
      for (const key of ["webhook_url", "webhook_secret"] as const) {
        if (!this.config[key]) {
          throw new ChannelError(
            this.name,
            "config_missing",
            `channels.${this.name}.${key} is required in webhook mode: write it in config.yaml (or use mode: polling)`,
          );
        }
      }
    }
    return new Telegraf(token, { telegram: { apiRoot: this.config.api_base.replace(/\/+$/, ""), webhookReply: false } });
  }

  private telegram() {
    if (!this.bot) throw new ChannelError(this.name, "not_started", "the Telegram channel is not running");
    return this.bot.telegram;
  }

  private keyboard(content: OutboundContent): Keyboard | undefined {
    if (!content.buttons || content.buttons.length === 0) return undefined;
    const questionId = content.questionId ?? "";
    return content.buttons.map((b) => {
      const data = encodeCallbackData(questionId, b.id);
      if (callbackDataBytes(data) > MAX_CALLBACK_BYTES) {
        throw new ChannelError(
          this.name,
          "content_rejected",
          `button "${b.label}" needs ${callbackDataBytes(data)} bytes of callback_data; Telegram allows ${MAX_CALLBACK_BYTES}: use shorter question and button ids`,
        );
      }
      return [{ text: b.label, callback_data: data }];
    });
  }

  private html(markdown: string): string {
    return toTelegramHtml(markdown) || escapeHtml(markdown.trim() || "…");
  }

  private plain(markdown: string): string {
    return toPlainText(markdown) || markdown.trim() || "…";
  }

  /** Calls with HTML; when Telegram cannot parse our markup, sends the same text unformatted. */
  private async withPlainRetry<T>(method: string, html: () => Promise<T>, plain: () => Promise<T>): Promise<T> {
    try {
      return await html();
    } catch (err) {
      if (!isParseError(err)) throw this.calls.failure(err, method);
      this.logger.warn({ err: errorMessage(err) }, "Telegram rejected the HTML; sending plain text");
    }
    try {
      return await plain();
    } catch (err) {
      throw this.calls.failure(err, method);
    }
  }
}

type WebhookCallback = ReturnType<Telegraf["webhookCallback"]>;
type JsonKeyboard = Array<Array<{ text: string; callback_data: string }>>;
