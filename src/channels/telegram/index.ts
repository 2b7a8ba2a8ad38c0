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
import { accessRulesFrom, isAllowedUser } from "../access.js";
import type {
  AccessRules,
  Channel,
  ChannelCapabilities,
  ChannelContext,
  ChannelStatus,
  ConversationRef,
  HttpMount,
  InboundMessage,
  InboundSink,
  MessageHandle,
  OutboundContent,
} from "../types.js";
import { callbackDataBytes, encodeCallbackData, MAX_CALLBACK_BYTES } from "./callback-data.js";
import { ClickAnswers } from "./clicks.js";
import { DEFAULT_EDIT_INTERVAL_MS, TelegramChannelConfig } from "./config.js";
import { escapeHtml, toPlainText, toTelegramHtml } from "./format.js";
import { type BotIdentity, type TgUpdate, translateUpdate } from "./inbound.js";
import { isParseError, mapTelegramError } from "./map-error.js";
import { Poller } from "./polling.js";
import { updateProblem } from "./update-check.js";

export { TelegramChannelConfig } from "./config.js";

const ALLOWED_UPDATES = ["message", "callback_query"];
const NOT_ALLOWED_TOAST = "You are not allowed to answer this question.";

type Keyboard = InlineKeyboardButton.CallbackButton[][];

export class TelegramChannel implements Channel {
  static readonly configSchema = TelegramChannelConfig;

  readonly name: string;
  readonly capabilities: ChannelCapabilities;
  readonly access: AccessRules;

  private readonly config: TelegramChannelConfig;
  private readonly logger: Logger;
  private readonly http: HttpMount;
  private bot: Telegraf | undefined;
  private identity: BotIdentity | undefined;
  private sink: InboundSink | undefined;
  private poller: Poller | undefined;
  private routePath: string | undefined;
  /** Webhook responses by update object, so a failed handler can answer 500 and get a redelivery. */
  private readonly responses = new WeakMap<object, ServerResponse>();
  private current: ChannelStatus;
  /** Bumped by every start and stop, so a start that stop() overtook can tell. */
  private run = 0;
  private starting: Promise<void> | undefined;
  private readonly clicks: ClickAnswers;

  constructor(ctx: ChannelContext<TelegramChannelConfig>) {
    this.name = ctx.name;
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
      markdown: "telegram-html",
      maxButtons: 10,
      typingIntervalMs: 4500,
    };
    this.current = { state: "stopped", connected: false, mode: ctx.config.mode, lastError: null };
    this.clicks = new ClickAnswers(this.name, () => this.telegram(), this.logger);
  }

  async start(sink: InboundSink): Promise<void> {
    // Claim a run number synchronously, so a stop() called right after start() overtakes it.
    const run = ++this.run;
    const prior = this.starting;
    const starting = (async () => {
      // A start that stop() overtook may still be unwinding: let it finish first.
      await prior?.catch(() => {});
      if (run !== this.run) throw this.stoppedWhileStarting();
      if (this.bot) return;
      await this.startRun(sink, run);
    })();
    this.starting = starting;
    try {
      await starting;
    } finally {
      if (this.starting === starting) this.starting = undefined;
    }
  }

  private async startRun(sink: InboundSink, run: number): Promise<void> {
    this.sink = sink;
    this.setState("starting", false);
    let bot: Telegraf;
    try {
      bot = this.createBot();
    } catch (err) {
      throw this.fail(err, "start");
    }
    try {
      const me = await bot.telegram.getMe();
      bot.botInfo = me;
      this.identity = { id: me.id, username: me.username };
    } catch (err) {
      if (run !== this.run) throw this.stoppedWhileStarting();
      throw this.fail(err, "getMe");
    }
    if (run !== this.run) throw this.stoppedWhileStarting();
    bot.catch((err, ctx) => {
      const res = this.responses.get(ctx.update);
      if (res && !res.headersSent) res.statusCode = 500;
      throw err;
    });
    bot.use((ctx) => this.onUpdate(ctx.update as unknown as TgUpdate));
    this.bot = bot;
    try {
      if (this.config.mode === "webhook") await this.startWebhook(bot);
      else await this.startPolling(bot);
    } catch (err) {
      const stopped = run !== this.run;
      await this.stop();
      if (stopped) throw this.stoppedWhileStarting();
      throw this.fail(err, this.config.mode === "webhook" ? "setWebhook" : "deleteWebhook");
    }
    // stop() ran while setWebhook/deleteWebhook was in flight: take down what was just set up.
    if (run !== this.run) {
      await this.stop();
      throw this.stoppedWhileStarting();
    }
    this.setState("running", true);
    this.logger.info({ channel: this.name, mode: this.config.mode, bot: this.identity.username }, "telegram channel started");
  }

  async stop(): Promise<void> {
    // A start() still in flight sees the new run number and undoes its own work.
    this.run++;
    const poller = this.poller;
    this.poller = undefined;
    if (this.routePath) this.http.unroute(this.routePath);
    this.routePath = undefined;
    this.clicks.releaseAll();
    this.bot = undefined;
    await poller?.stop();
    if (this.current.state !== "failed") this.setState("stopped", false);
    else this.current.connected = false;
  }

  /** Answers a click held open for the core: `notice` shows as an alert to the clicker alone. */
  answerAction(msg: InboundMessage, notice?: string): Promise<boolean> {
    return this.clicks.answerAction(msg, notice);
  }

  status(): ChannelStatus {
    return { ...this.current, lastError: this.current.lastError ? { ...this.current.lastError } : null };
  }

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

  async typing(ref: ConversationRef): Promise<void> {
    try {
      await this.telegram().sendChatAction(ref.chatId, "typing", ref.threadId ? { message_thread_id: Number(ref.threadId) } : {});
    } catch (err) {
      // A missing typing indicator is harmless; the reply itself will report real trouble.
      this.logger.debug({ channel: this.name, err: errorMessage(err) }, "sendChatAction failed");
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
    if (!isAllowedUser(this.access, translated.userId)) return this.clicks.answer(translated.queryId, NOT_ALLOWED_TOAST);
    await this.clicks.take(translated.queryId, translated.message, sink);
  }

  // ---- transports ----

  private async startPolling(bot: Telegraf): Promise<void> {
    await bot.telegram.deleteWebhook({ drop_pending_updates: false });
    const poller = new Poller(
      bot.telegram,
      {
        handle: (update) => bot.handleUpdate(update as never),
        connected: () => {
          if (this.current.state !== "running" || !this.current.connected) this.setState("running", true);
        },
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
      this.current.lastError = { message, at: Date.now() };
      this.setState("degraded", true);
      this.logger.warn({ channel: this.name, err: errorMessage(err), retryInMs }, "telegram update not recorded");
      return true;
    }
    const mapped = mapTelegramError(this.name, err, "getUpdates");
    this.current.lastError = { message: mapped.message, at: Date.now() };
    const fatal = mapped instanceof ChannelError && mapped.code === "auth_failed";
    this.setState(fatal ? "failed" : "degraded", false);
    if (fatal) this.current.reason = mapped.message;
    this.logger.warn(
      { channel: this.name, err: mapped.message, retryInMs: fatal ? undefined : retryInMs },
      "telegram polling failed",
    );
    return !fatal;
  }

  private async startWebhook(bot: Telegraf): Promise<void> {
    const { url, path } = this.webhookTarget();
    const secretToken = this.config.webhook_secret as string;
    const callback = bot.webhookCallback(path, { secretToken });
    this.routePath = path;
    this.http.route("POST", path, (req, res) => this.onWebhook(callback, req, res));
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
    // Our server routed by path already; Telegraf compares req.url (query included) with the
    // path exactly, so a webhook_url with a query string would get 403 forever. Only its
    // secret check should decide.
    if (this.routePath) req.url = this.routePath;
    try {
      await callback(req as Parameters<WebhookCallback>[0], res);
    } catch (err) {
      // Telegraf already answered 500 (set in bot.catch), so Telegram delivers the update again.
      this.logger.warn({ channel: this.name, err: errorMessage(err) }, "telegram update not recorded; Telegram will redeliver");
    }
  }

  /** The public URL given to setWebhook and the path mounted on Antler's server. */
  private webhookTarget(): { url: string; path: string } {
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
    if (url.pathname === "/" || url.pathname === "") url.pathname = `/webhooks/${this.name}`;
    return { url: url.toString(), path: url.pathname };
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
    return new Telegraf(token, { telegram: { apiRoot: this.config.api_root.replace(/\/+$/, ""), webhookReply: false } });
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
          "callback_data_too_long",
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
      if (!isParseError(err)) throw this.noteError(mapTelegramError(this.name, err, method));
      this.logger.warn({ channel: this.name, err: errorMessage(err) }, "Telegram rejected the HTML; sending plain text");
    }
    try {
      return await plain();
    } catch (err) {
      throw this.noteError(mapTelegramError(this.name, err, method));
    }
  }

  private noteError(err: Error): Error {
    if (err instanceof ChannelError && err.code !== "not_modified" && err.code !== "rate_limited") {
      this.current.lastError = { message: err.message, at: Date.now() };
    }
    return err;
  }

  private stoppedWhileStarting(): ChannelError {
    this.setState("stopped", false);
    return new ChannelError(this.name, "stopped", "the channel was stopped before it finished starting");
  }

  private fail(err: unknown, method: string): Error {
    const mapped = mapTelegramError(this.name, err, method);
    this.bot = undefined;
    this.current = { ...this.current, state: "failed", connected: false, reason: mapped.message };
    this.current.lastError = { message: mapped.message, at: Date.now() };
    return mapped;
  }

  private setState(state: ChannelStatus["state"], connected: boolean): void {
    this.current.state = state;
    this.current.connected = connected;
    if (state === "running" || state === "starting") delete this.current.reason;
  }
}

type WebhookCallback = ReturnType<Telegraf["webhookCallback"]>;
type JsonKeyboard = Array<Array<{ text: string; callback_data: string }>>;
