/**
 * Discord adapter: discord.js 14 on the Gateway (intents Guilds, GuildMessages, DirectMessages
 * and the privileged MessageContent), with REST calls through discord.js's own client. It only
 * translates; the core streams, throttles, retries and checks access. See README.md for the
 * conversation keys and the choices made.
 */
import {
  type APIMessage,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type Client,
  Events,
  type Interaction,
  InteractionResponseType,
  type Message,
  MessageFlags,
  REST,
  Routes,
} from "discord.js";
import { ChannelError, errorMessage } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { isAllowedUser } from "../kit/access.js";
import { ClickHolds } from "../kit/click-holds.js";
import { LifecycleChannel } from "../kit/lifecycle.js";
import { PlatformCalls } from "../kit/platform-call.js";
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
  OutboundContent,
  OutboundFile,
  SendOptions,
  SendTarget,
  SinkOptions,
} from "../types.js";
import type { DiscordFileSource } from "./attachments.js";
import { buttonRows, MAX_BUTTONS } from "./buttons.js";
import { registerCommands, SLASH_COMMANDS } from "./commands.js";
import { DISCORD_RENAMES, DiscordChannelConfig } from "./config.js";
import { downloadAttachment, linkIn, MAX_UPLOAD_BYTES, uploadRequest } from "./files.js";
import { discordEmitter, escapeDiscord, toDiscordMarkdown } from "./format.js";
import { type DiscordIdentity, type KeyRules, keyTail, translateClick, translateCommand, translateMessage } from "./inbound.js";
import { DiscordCode, discordErrorCode, gatewayCloseProblem, mapDiscordError } from "./map-error.js";
import { DiscordTargets, nonceFields } from "./targets.js";
import { ThreadStarter } from "./thread-start.js";
import { abortable, createGatewayClient, loginError } from "./transport.js";

export { SLASH_COMMANDS } from "./commands.js";
export { DiscordChannelConfig } from "./config.js";

/** Discord's limit on message content, counted on the converted text. */
export const MAX_CONTENT = 2000;
/** An interaction must be answered within 3 s; the core answers a click in milliseconds unless its queue is busy. */
export const CLICK_HOLD_MS = 2000;
/** Nothing the agent writes pings anyone: no @everyone, no roles, no users. */
const NO_PINGS = { parse: [] as string[] };
const NOT_TAKEN = "That click could not be taken just now. Please try again.";
const MESSAGE_NOT_TAKEN = "I couldn't take your message just now. Please send it again.";

export class DiscordChannel extends LifecycleChannel implements Channel {
  static readonly configSchema = DiscordChannelConfig;
  static readonly configRenames = DISCORD_RENAMES;

  readonly capabilities: ChannelCapabilities;
  readonly access: AccessRules;
  /** Without server boosts Discord takes 10 MiB per file (boosted servers take more; DMs do not). */
  readonly maxUploadBytes = MAX_UPLOAD_BYTES;

  private readonly config: DiscordChannelConfig;
  private readonly logger: Logger;
  private readonly rules: KeyRules;
  private client: Client | undefined;
  private identity: DiscordIdentity | undefined;
  private sink: InboundSink | undefined;
  private readonly holds = new ClickHolds();
  /** Clicks held open for the core, by interaction id. */
  private readonly held = new Map<string, ButtonInteraction>();
  private readonly threads: ThreadStarter;
  private readonly calls = new PlatformCalls(this.name, mapDiscordError, this.life);
  private readonly targets = new DiscordTargets(this.name, () => this.rest(), this.calls);

  constructor(ctx: ChannelContext<DiscordChannelConfig>) {
    super(ctx.name, "gateway", { exclusive: true });
    this.config = ctx.config;
    this.logger = ctx.logger;
    this.rules = { name: ctx.name, thread: ctx.config.thread, scope: ctx.config.session_scope };
    this.access = {
      allowedUsers: ctx.config.allowed_users,
      // Servers and channels are checked here, where a thread's parent is known; DMs have neither.
      allowedChats: [],
      requireMention: ctx.config.require_mention,
      approvers: ctx.config.approvers,
    };
    this.capabilities = {
      maxTextLength: MAX_CONTENT,
      minEditIntervalMs: ctx.config.edit_interval_ms,
      edits: true,
      buttons: true,
      threads: true,
      markdown: discordEmitter,
      maxButtons: MAX_BUTTONS,
      // Discord shows "typing…" for about 10 s.
      typingIntervalMs: 8000,
      // Discord never delivers a Gateway event twice: the core's sink tries recording again.
      redelivers: false,
    };
    this.threads = new ThreadStarter(
      () => this.rest(),
      (err, what) => this.calls.failure(err, what),
      (message) => {
        this.life.noteError(message);
        this.logger.warn(message);
      },
    );
  }

  /** Logs in to the Gateway; resolves once the bot's servers and channels are known. */
  protected async open(sink: InboundSink, signal: AbortSignal): Promise<void> {
    const token = this.token();
    this.sink = sink;
    const client = createGatewayClient(this.config);
    this.client = client;
    this.listen(client);
    const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
    try {
      await abortable(client.login(token), signal);
      await abortable(ready, signal);
    } catch (err) {
      if (signal.aborted) return;
      throw loginError(this.name, err);
    }
    if (signal.aborted) return;
    const user = client.user;
    if (!user) throw new ChannelError(this.name, "platform_error", "the Gateway's READY named no bot user");
    this.identity = { id: user.id, name: user.username };
    await registerCommands(client, {
      channel: this.name,
      config: this.config,
      logger: this.logger,
      noteError: (err) => this.life.noteError(err),
    });
    this.life.connected();
    this.logger.info({ bot: user.username, guilds: client.guilds.cache.size }, "discord channel started");
  }

  /**
   * Leaves the Gateway only: the client's REST manager (and its token) still sends and edits.
   * discord.js types `ws.destroy` as private; `Client.destroy` would also drop the token.
   */
  protected override async closeIntake(): Promise<void> {
    const ws = this.client?.ws as unknown as { destroy(): Promise<void> } | undefined;
    await ws?.destroy();
  }

  /** Leaves the Gateway and lets held clicks go; safe to call more than once. */
  protected async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.holds.releaseAll();
    this.held.clear();
    this.threads.clear();
    await client?.destroy();
  }

  /** A user's DM or a channel/thread → the ref its messages get (targets.ts). */
  resolveTarget(target: SendTarget): Promise<ConversationRef> {
    return this.targets.resolve(target);
  }

  /** With an idempotency key the create carries a nonce Discord enforces, so a retry returns the first message. */
  async send(ref: ConversationRef, content: OutboundContent, options?: SendOptions): Promise<MessageHandle> {
    const channelId = await this.threads.target(ref);
    const body: Record<string, unknown> = {
      content: this.text(content.text),
      allowed_mentions: NO_PINGS,
      flags: MessageFlags.SuppressEmbeds,
      ...nonceFields(options?.idempotencyKey),
    };
    const rows = buttonRows(this.name, content, keyTail(ref, channelId));
    if (rows) body.components = rows;
    const quote = channelId === ref.chatId ? (ref.replyToId ?? (ref.extra?.startThread ? ref.threadId : undefined)) : undefined;
    if (quote) body.message_reference = { message_id: quote, fail_if_not_exists: false };
    const sent = (await this.calls.run("send", () =>
      this.rest().post(Routes.channelMessages(channelId), { body }),
    )) as APIMessage;
    return { id: sent.id, ref, extra: { channel: channelId } };
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    const channelId = channelOf(handle);
    const body: Record<string, unknown> = { content: this.text(content.text), allowed_mentions: NO_PINGS };
    // Discord keeps the buttons an edit does not mention; an empty list removes them.
    if (content.buttons) body.components = buttonRows(this.name, content, keyTail(handle.ref, channelId)) ?? [];
    await this.calls.run("edit", () => this.rest().patch(Routes.channelMessage(channelId, handle.id), { body }));
  }

  /** Posts `file` as an attachment where replies go (the conversation's thread, else the channel). */
  async sendFile(ref: ConversationRef, file: OutboundFile, options?: SendOptions): Promise<MessageHandle> {
    const channelId = await this.threads.target(ref);
    const request = uploadRequest(file);
    Object.assign(request.body, nonceFields(options?.idempotencyKey));
    const sent = (await this.calls.run("uploading a file", () =>
      this.rest().post(Routes.channelMessages(channelId), request),
    )) as APIMessage;
    return { id: sent.id, ref, extra: { channel: channelId } };
  }

  /** Reads an attachment from Discord's CDN, at most `maxBytes` of it. */
  async download(
    msg: InboundMessage,
    attachment: InboundAttachment,
    maxBytes: number,
    options?: DownloadOptions,
  ): Promise<Uint8Array> {
    const signal = options?.signal;
    const fresh = async (source: DiscordFileSource): Promise<string | undefined> => {
      const route = Routes.channelMessage(source.channelId, source.messageId);
      const get = () => this.rest().get(route, signal ? { signal } : {});
      const message = (await this.calls.run("finding an attachment's new link", get, signal)) as APIMessage;
      return linkIn(message, source.id);
    };
    return downloadAttachment(this.name, msg, attachment, maxBytes, fresh, signal);
  }

  async typing(ref: ConversationRef): Promise<void> {
    try {
      const channelId = await this.threads.target(ref);
      await this.rest().post(Routes.channelTyping(channelId));
    } catch (err) {
      // A missing typing indicator is harmless; the reply itself will report real trouble.
      this.logger.debug({ err: errorMessage(err) }, "typing failed");
    }
  }

  /** Answers a held click: with `notice`, as a reply only the clicker sees; else a silent deferUpdate. */
  async answerAction(msg: InboundMessage, notice?: string): Promise<boolean> {
    // The notice is text; Discord renders an ephemeral reply's content as Markdown.
    return this.holds.answer(msg.action?.callbackId, notice === undefined ? undefined : escapeDiscord(notice));
  }

  /** For `antler doctor`: the token works, and the application may read message content. */
  async check(): Promise<string> {
    const rest = this.client?.rest ?? new REST({ api: this.config.api_base, retries: 0 }).setToken(this.token());
    let user: { id: string; username: string };
    let app: { id: string; flags?: number };
    try {
      user = (await rest.get(Routes.user())) as typeof user;
      app = (await rest.get(Routes.currentApplication())) as typeof app;
    } catch (err) {
      throw mapDiscordError(this.name, err, "GET /users/@me");
    }
    // GatewayMessageContent (1 << 19) once verified, GatewayMessageContentLimited (1 << 18) before.
    if (((app.flags ?? 0) & ((1 << 18) | (1 << 19))) === 0) {
      throw gatewayCloseProblem(this.name, 4014) as ChannelError;
    }
    return `@${user.username} (bot id ${user.id}, application ${app.id})`;
  }

  // ---- inbound ----

  private listen(client: Client): void {
    client.on(Events.MessageCreate, (message) => void this.onMessage(message));
    client.on(Events.InteractionCreate, (interaction) => void this.onInteraction(interaction));
    client.on(Events.ShardDisconnect, (event) => this.onGatewayClosed(event.code));
    client.on(Events.ShardReconnecting, () => {
      if (this.identity) this.life.degraded("the Gateway connection dropped; reconnecting");
    });
    client.on(Events.ShardResume, () => this.life.connected());
    client.on(Events.ShardReady, () => {
      if (this.identity) this.life.connected();
    });
    client.on(Events.ShardError, (err) => this.logger.warn({ err: errorMessage(err) }, "discord gateway error"));
    client.on(Events.Error, (err) => this.logger.warn({ err: errorMessage(err) }, "discord client error"));
  }

  private async onMessage(message: Message): Promise<void> {
    const identity = this.identity ?? this.botIdentity();
    if (!identity || !this.sink) return;
    const msg = translateMessage(this.rules, identity, message);
    if (!msg || !this.allowedPlace(msg.ref)) return;
    await this.deliver(msg);
  }

  /** Hands `msg` to the core (which tries again and tells the chat when it never can); false when it was not taken. */
  private async deliver(msg: InboundMessage, options?: SinkOptions): Promise<boolean> {
    if (!this.sink) return false;
    try {
      await this.sink(msg, options);
      return true;
    } catch {
      return false;
    }
  }

  private async onInteraction(interaction: Interaction): Promise<void> {
    try {
      if (interaction.isButton()) await this.onClick(interaction);
      else if (interaction.isChatInputCommand()) await this.onCommand(interaction);
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, "discord interaction failed");
    }
  }

  private async onClick(interaction: ButtonInteraction): Promise<void> {
    const msg = translateClick(this.rules, interaction);
    if (!msg || !this.allowedPlace(msg.ref)) return this.respond(interaction);
    const verdict = this.holds.hold(interaction.id, CLICK_HOLD_MS);
    this.held.set(interaction.id, interaction);
    void verdict.then((v) => {
      this.held.delete(interaction.id);
      return this.respond(interaction, v.notice);
    });
    if (!(await this.deliver(msg, { answersSender: true }))) this.holds.answer(interaction.id, NOT_TAKEN);
  }

  private async onCommand(interaction: ChatInputCommandInteraction): Promise<void> {
    if (!SLASH_COMMANDS.some((c) => c.name === interaction.commandName)) return;
    const msg = translateCommand(this.rules, interaction);
    const arg = interaction.options.getString("name");
    if (arg) msg.text += ` ${arg}`;
    if (!this.allowedPlace(msg.ref) || !isAllowedUser(this.access, interaction.user.id)) {
      return this.respond(interaction, "You are not allowed to use this bot here.");
    }
    const taken = await this.deliver(msg, { answersSender: true });
    await this.respond(interaction, taken ? `\`${msg.text}\`: the answer follows in this chat.` : MESSAGE_NOT_TAKEN);
  }

  /** Answers an interaction: `notice` as a reply only its user sees, else a deferred update. Never throws. */
  private async respond(interaction: ButtonInteraction | ChatInputCommandInteraction, notice?: string): Promise<void> {
    const body =
      notice === undefined
        ? { type: InteractionResponseType.DeferredMessageUpdate }
        : {
            type: InteractionResponseType.ChannelMessageWithSource,
            data: { content: notice, flags: MessageFlags.Ephemeral, allowed_mentions: NO_PINGS },
          };
    try {
      await this.rest().post(Routes.interactionCallback(interaction.id, interaction.token), { body, auth: false });
    } catch (err) {
      const code = discordErrorCode(err);
      const level =
        code === DiscordCode.UnknownInteraction || code === DiscordCode.InteractionAlreadyAcknowledged ? "debug" : "warn";
      this.logger[level]({ err: errorMessage(err) }, "answering a Discord interaction failed");
    }
  }

  /** The ref already names the server (`workspace`) and the channel, a thread's parent for a thread (`chatId`). */
  private allowedPlace(ref: ConversationRef): boolean {
    if (!ref.workspace) return true;
    const { allowed_guilds: guilds, allowed_channels: channels } = this.config;
    if (guilds.length > 0 && !guilds.includes(ref.workspace)) return false;
    return channels.length === 0 || channels.includes(ref.chatId);
  }

  private onGatewayClosed(code: number): void {
    const problem = gatewayCloseProblem(this.name, code);
    if (!problem) return;
    this.life.noteError(problem);
    this.life.failed(problem);
    this.logger.error({ code }, problem.message);
  }

  private token(): string {
    const token = this.config.bot_token;
    if (!token) {
      throw new ChannelError(
        this.name,
        "config_missing",
        `channels.${this.name}.bot_token is required: set DISCORD_BOT_TOKEN or write it in config.yaml`,
      );
    }
    return token;
  }

  private botIdentity(): DiscordIdentity | undefined {
    const user = this.client?.user;
    return user ? { id: user.id, name: user.username } : undefined;
  }

  private rest(): REST {
    if (!this.client) throw new ChannelError(this.name, "not_started", "the Discord channel is not running");
    return this.client.rest;
  }

  // ---- helpers ----

  private text(markdown: string): string {
    return toDiscordMarkdown(markdown) || "…";
  }
}

function channelOf(handle: MessageHandle): string {
  const posted = handle.extra?.channel;
  return typeof posted === "string" ? posted : (handle.ref.threadId ?? handle.ref.chatId);
}
