/**
 * Slack channel: an @mention bot that answers in threads, and a DM assistant. Bolt receives
 * (Socket Mode, or the Events API on Antler's server); a Web API client sends. See README.md.
 */
import { App, type Receiver, webApi } from "@slack/bolt";
import { AntlerError, ChannelError, errorMessage, PlatformAuthError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { accessRulesFrom } from "../kit/access.js";
import { LifecycleChannel } from "../kit/lifecycle.js";
import { PlatformCalls } from "../kit/platform-call.js";
import { literalMarkdown } from "../markdown/index.js";
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
  SendTarget,
} from "../types.js";
import { ThreadMemory } from "./bot-threads.js";
import { ACTION_PREFIX, MAX_BUTTONS, questionBlocks } from "./buttons.js";
import { SLACK_RENAMES, SlackChannelConfig } from "./config.js";
import { SLACK_MAX_UPLOAD_BYTES, SlackFiles } from "./files.js";
import { slackEmitter, toMrkdwn } from "./format.js";
import {
  fromAction,
  fromMention,
  fromMessage,
  type InboundContext,
  type SlackActionBody,
  type SlackEventBody,
} from "./inbound.js";
import { mapSlackError } from "./map-error.js";
import { slackSdkLogger } from "./sdk-logger.js";
import { SlackNativeStream } from "./stream.js";
import { SlackTargets } from "./targets.js";
import { createSocketReceiver } from "./transport-socket.js";
import { SlackHttpReceiver } from "./transport-webhook.js";

export { SlackChannelConfig } from "./config.js";

type WebClient = InstanceType<typeof webApi.WebClient>;

/**
 * Where a channel named `slack` also takes Events API requests: the path of versions before
 * `/webhooks/<name>`, kept so Request URLs set up then keep working.
 */
export const SLACK_EVENTS_ALIAS = "/slack/events";

/** The bot token, and the app token (Socket Mode) or the signing secret (webhook). */
interface Credentials {
  botToken: string;
  appToken?: string;
  signingSecret?: string;
}

/** Who the bot is, from auth.test. */
interface BotIdentity {
  userId: string;
  botId: string;
  teamId: string;
  name: string;
}

export class SlackChannel extends LifecycleChannel implements Channel {
  static readonly configSchema = SlackChannelConfig;
  static readonly configRenames = SLACK_RENAMES;

  readonly capabilities: ChannelCapabilities;
  readonly access: AccessRules;
  /** Slack streams expire after about 5 minutes; the core rotates to a new message before that. */
  readonly streamLimits: NativeStreamLimits = { maxTextLength: 12_000, maxDurationMs: 270_000 };
  /** Slack's limit for one file (see files.ts). */
  readonly maxUploadBytes = SLACK_MAX_UPLOAD_BYTES;

  private readonly config: SlackChannelConfig;
  private readonly logger: Logger;
  private readonly web: WebClient;
  private readonly threads = new ThreadMemory();
  private readonly files: SlackFiles;
  private readonly calls = new PlatformCalls(this.name, mapSlackError, this.life);
  private readonly targets = new SlackTargets(
    this.name,
    () => this.web,
    this.calls,
    () => this.bot?.teamId,
  );
  private app: App | undefined;
  private bot: BotIdentity | undefined;

  constructor(private readonly ctx: ChannelContext<SlackChannelConfig>) {
    super(ctx.name, ctx.config.mode, { exclusive: ctx.config.mode === "socket" });
    this.config = ctx.config;
    this.logger = ctx.logger;
    this.access = accessRulesFrom({
      allowed_users: this.config.allowed_users,
      allowed_chats: this.config.allowed_channels,
      require_mention: this.config.require_mention,
      approvers: this.config.approvers,
    });
    this.capabilities = {
      // chat.update refuses text over 4,000 characters; the core counts the mrkdwn, escapes included.
      maxTextLength: 4000,
      minEditIntervalMs: this.config.edit_interval_ms,
      edits: true,
      buttons: true,
      threads: true,
      markdown: slackEmitter,
      maxButtons: MAX_BUTTONS,
      // assistant.threads.setStatus lasts up to 2 minutes; refresh well before.
      typingIntervalMs: 30_000,
    };
    this.web = new webApi.WebClient(this.config.bot_token ?? "", {
      slackApiUrl: this.config.api_base,
      logger: slackSdkLogger(this.logger),
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
    });
    this.files = new SlackFiles({
      channel: this.name,
      web: this.web,
      botToken: this.config.bot_token ?? "",
      apiBase: this.config.api_base,
      call: (method, run) => this.calls.run(method, run),
    });
  }

  /** Identifies the bot, then brings Bolt up on Socket Mode or on the webhook route. */
  protected async open(sink: InboundSink, signal: AbortSignal): Promise<void> {
    const credentials = this.requireCredentials();
    this.bot = await this.identify();
    if (signal.aborted) return;
    const app = this.createApp(credentials, this.bot);
    this.app = app;
    this.listen(app, sink);
    await app.start().catch((err: unknown) => {
      throw this.receiverError(err);
    });
    this.logger.info({ mode: this.config.mode, bot: this.bot.userId }, "slack channel started");
  }

  /** Stops Bolt's socket; the Web API client it does not own still sends and edits. */
  protected override closeIntake(): Promise<void> {
    return this.close();
  }

  /** Stops Bolt (its socket or its route); safe to call more than once. */
  protected async close(): Promise<void> {
    const app = this.app;
    this.app = undefined;
    try {
      await app?.stop();
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, "slack stop failed");
    }
  }

  /** A user's DM (conversations.open) or a channel/thread → the ref its messages get (targets.ts). */
  resolveTarget(target: SendTarget): Promise<ConversationRef> {
    return this.targets.resolve(target);
  }

  /** chat.postMessage takes no idempotency key, so `SendOptions` is not read (see README "Sending first"). */
  async send(ref: ConversationRef, content: OutboundContent): Promise<MessageHandle> {
    const text = toMrkdwn(content.text) || " ";
    const buttons = content.buttons ?? [];
    const withButtons = buttons.length > 0 && content.questionId !== undefined;
    const result = await this.calls.run("chat.postMessage", () =>
      this.web.chat.postMessage({
        channel: ref.chatId,
        text,
        ...(ref.threadId ? { thread_ts: ref.threadId } : {}),
        ...(withButtons ? { blocks: questionBlocks(text, content.questionId as string, buttons) } : {}),
        unfurl_links: false,
      }),
    );
    if (ref.threadId && ref.chatType === "group") this.threads.remember(ref.chatId, ref.threadId);
    return {
      id: result.ts as string,
      ref,
      ...(withButtons ? { extra: { questionId: content.questionId as string, buttons: buttons.map((b) => ({ ...b })) } } : {}),
    };
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    const text = toMrkdwn(content.text) || " ";
    // A message with buttons shows its blocks, not its text: keep the buttons unless told otherwise.
    const stored = handle.extra?.buttons as Array<{ id: string; label: string }> | undefined;
    const buttons = content.buttons ?? stored ?? [];
    const questionId = content.questionId ?? (handle.extra?.questionId as string | undefined);
    const hadBlocks = stored !== undefined || content.buttons !== undefined;
    const blocks =
      buttons.length > 0 && questionId !== undefined ? questionBlocks(text, questionId, buttons) : hadBlocks ? [] : undefined;
    await this.calls.run("chat.update", () =>
      this.web.chat.update({ channel: handle.ref.chatId, ts: handle.id, text, ...(blocks ? { blocks } : {}) }),
    );
  }

  /** `GET url_private_download` with the bot token, at most `maxBytes` (files.ts). */
  async download(
    _msg: InboundMessage,
    attachment: InboundAttachment,
    maxBytes: number,
    options?: DownloadOptions,
  ): Promise<Uint8Array> {
    const signal = options?.signal;
    return this.calls.run("file download", () => this.files.download(attachment, maxBytes, signal), signal);
  }

  /** File upload v2, shared into the thread replies go to. The handle's id is the Slack file id. */
  async sendFile(ref: ConversationRef, file: OutboundFile): Promise<MessageHandle> {
    const handle = await this.files.upload(ref, file);
    if (ref.threadId && ref.chatType === "group") this.threads.remember(ref.chatId, ref.threadId);
    return handle;
  }

  /** `chat.postEphemeral`: only `userId` sees it, in the thread, until they reload. False when Slack refuses. */
  async notifyUser(ref: ConversationRef, userId: string, text: string): Promise<boolean> {
    try {
      await this.calls.run("chat.postEphemeral", () =>
        this.web.chat.postEphemeral({
          channel: ref.chatId,
          user: userId,
          // Like a click's notice, `text` is plain text: escaped, so Slack shows it as written.
          text: toMrkdwn(literalMarkdown(text)) || " ",
          ...(ref.threadId ? { thread_ts: ref.threadId } : {}),
        }),
      );
      return true;
    } catch (err) {
      // e.g. user_not_in_channel: the core falls back to a notice everyone sees.
      this.logger.warn({ err: errorMessage(err) }, "slack ephemeral message refused");
      return false;
    }
  }

  /** "is thinking…" under the thread, until the first reply or two minutes pass. */
  async typing(ref: ConversationRef): Promise<void> {
    await this.setStatus(ref, "is thinking…");
  }

  async typingDone(ref: ConversationRef): Promise<void> {
    await this.setStatus(ref, "");
  }

  async startStream(ref: ConversationRef): Promise<NativeStream | undefined> {
    if (!this.config.native_streaming || !ref.threadId) return undefined;
    const user = typeof ref.extra?.user === "string" ? ref.extra.user : undefined;
    const team = typeof ref.extra?.team === "string" ? ref.extra.team : this.bot?.teamId;
    try {
      const result = await this.web.chat.startStream({
        channel: ref.chatId,
        thread_ts: ref.threadId,
        ...(user ? { recipient_user_id: user } : {}),
        ...(team ? { recipient_team_id: team } : {}),
      });
      if (ref.chatType === "group") this.threads.remember(ref.chatId, ref.threadId);
      return new SlackNativeStream(this.web, this.name, { id: result.ts as string, ref }, this.logger);
    } catch (err) {
      const mapped = mapSlackError(this.name, err, "chat.startStream");
      if (mapped.code === "rate_limited") throw this.calls.note(mapped);
      // Streaming not available here (scope, channel type, recipient): the core posts and edits instead.
      this.logger.warn({ err: mapped.message }, "slack native streaming unavailable; using chat.update");
      return undefined;
    }
  }

  /** `antler doctor`: the bot token by auth.test, and in socket mode the app token by apps.connections.open. */
  async check(): Promise<string> {
    const credentials = this.requireCredentials();
    const bot = await this.identify();
    if (credentials.appToken) {
      const apps = new webApi.WebClient(credentials.appToken, { slackApiUrl: this.config.api_base, retryConfig: { retries: 0 } });
      try {
        await apps.apps.connections.open({});
      } catch (err) {
        const mapped = mapSlackError(this.name, err, "apps.connections.open");
        throw new PlatformAuthError(this.name, `app token rejected (${mapped.message}): check channels.${this.name}.app_token`);
      }
    }
    return `bot @${bot.name} (${bot.userId}) in team ${bot.teamId}, ${this.config.mode} mode`;
  }

  private requireCredentials(): Credentials {
    const missing = (key: string, env: string) =>
      new ChannelError(
        this.name,
        "config_missing",
        `channels.${this.name}.${key} is required in ${this.config.mode} mode: set ${env} or write it in config.yaml`,
      );
    const botToken = this.config.bot_token;
    if (!botToken) throw missing("bot_token", "SLACK_BOT_TOKEN");
    if (this.config.mode === "socket") {
      if (!this.config.app_token) throw missing("app_token", "SLACK_APP_TOKEN");
      return { botToken, appToken: this.config.app_token };
    }
    if (!this.config.signing_secret) throw missing("signing_secret", "SLACK_SIGNING_SECRET");
    return { botToken, signingSecret: this.config.signing_secret };
  }

  private async identify(): Promise<BotIdentity> {
    const result = await this.calls.run("auth.test", () => this.web.auth.test());
    if (!result.user_id || !result.team_id)
      throw new ChannelError(this.name, "platform_error", "auth.test returned no user or team id");
    return {
      userId: result.user_id,
      botId: result.bot_id ?? "",
      teamId: result.team_id,
      name: result.user ?? result.user_id,
    };
  }

  /** Bolt for `bot`, receiving over Socket Mode or the webhook route as the credentials say. */
  private createApp(credentials: Credentials, bot: BotIdentity): App {
    return new App({
      token: credentials.botToken,
      botId: bot.botId,
      botUserId: bot.userId,
      receiver: this.createReceiver(credentials),
      logger: slackSdkLogger(this.logger),
      clientOptions: { slackApiUrl: this.config.api_base, retryConfig: { retries: 0 } },
    });
  }

  private createReceiver(credentials: Credentials): Receiver {
    if (credentials.signingSecret) {
      return new SlackHttpReceiver({
        signingSecret: credentials.signingSecret,
        http: this.ctx.http,
        channel: this.name,
        aliases: this.name === "slack" ? [SLACK_EVENTS_ALIAS] : [],
        logger: this.logger,
      });
    }
    return createSocketReceiver(
      {
        appToken: credentials.appToken as string,
        apiUrl: this.config.api_base,
        sdkLogger: slackSdkLogger(this.logger),
        logger: this.logger,
        onConnection: (connected, reason) => this.onConnection(connected, reason),
      },
      () => this.app,
    );
  }

  private onConnection(connected: boolean, reason?: string): void {
    if (connected) {
      this.life.connected();
      return;
    }
    this.life.degraded(`the Socket Mode connection is down${reason ? ` (${reason})` : ""}; reconnecting`);
    if (this.app) this.logger.warn({ reason }, "slack socket down");
  }

  private listen(app: App, sink: InboundSink): void {
    const context = this.inboundContext();
    const deliver = async (msg: InboundMessage | undefined) => {
      if (!msg) return;
      if (msg.mentioned && msg.ref.chatType === "group" && msg.ref.threadId)
        this.threads.remember(msg.ref.chatId, msg.ref.threadId);
      await sink(msg);
    };
    app.event("app_mention", async ({ body }) => deliver(fromMention(body as SlackEventBody, context)));
    app.event("message", async ({ body }) => deliver(fromMessage(body as SlackEventBody, context)));
    app.action(new RegExp(`^${ACTION_PREFIX}`), async ({ body, ack }) => {
      await deliver(fromAction(body as unknown as SlackActionBody, context));
      await ack();
    });
  }

  private inboundContext(): InboundContext {
    const bot = this.bot as BotIdentity;
    return {
      name: this.name,
      botUserId: bot.userId,
      teamId: bot.teamId,
      isBotThread: (channel, threadTs) => this.threads.has(channel, threadTs),
    };
  }

  private async setStatus(ref: ConversationRef, status: string): Promise<void> {
    if (!ref.threadId) return;
    try {
      await this.web.assistant.threads.setStatus({ channel_id: ref.chatId, thread_ts: ref.threadId, status });
    } catch (err) {
      // Only AI-app threads show a status; elsewhere Slack refuses it, which is harmless.
      this.logger.debug({ err: errorMessage(err) }, "slack setStatus failed");
    }
  }

  /** Receiver failures in socket mode concern the app token, not the bot token auth.test accepted. */
  private receiverError(err: unknown): Error {
    // Antler's own refusal (another channel holds the webhook path) stays as it is.
    if (err instanceof AntlerError && !(err instanceof ChannelError)) return err;
    const mapped = mapSlackError(this.name, err, "Socket Mode");
    if (this.config.mode === "socket" && mapped.code !== "rate_limited") {
      return new PlatformAuthError(
        this.name,
        `Socket Mode did not connect (${errorMessage(err)}): check channels.${this.name}.app_token`,
        { cause: err },
      );
    }
    return mapped;
  }
}
