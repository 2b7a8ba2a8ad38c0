/**
 * The channel contract. A channel adapter translates between one chat platform and Antler's
 * shared core; it does not dedupe, queue, throttle, chunk, retry or check access — the core
 * (dispatcher and renderer) does all of that once, for every platform.
 *
 * Adapters are plain classes, loaded by the registry from a `"module:Export"` path and
 * constructed with a {@link ChannelContext}. Everything an adapter hands to the core
 * (refs, handles) must be JSON-serialisable: it is stored so that work survives restarts.
 */
import type { ZodType } from "zod";
import type { ConfigRenames } from "../config/renames.js";
import type { HistoryEntry } from "../harness/types.js";
import type { Logger } from "../log/logger.js";
import type { RouteHandler } from "../server/http.js";
import type { Json } from "../storage/json.js";
import type { MarkdownEmitter } from "./markdown/emitter.js";
import type { ProgressContent } from "./progress.js";
import type { SendOptions, SendTarget, TurnOrigin } from "./targets.js";

export type { MarkdownEmitter } from "./markdown/emitter.js";
export type { ProgressContent, ProgressRow } from "./progress.js";
export type { SendOptions, SendTarget, TurnOrigin } from "./targets.js";

/**
 * How a platform shows the agent's Markdown. Open to any platform: an adapter brings its own
 * emitter, and no core type changes.
 * - A {@link MarkdownEmitter}: the adapter converts with `renderMarkdown(text, emitter)` when it
 *   sends or edits, and the core counts lengths on the converted text (see `render/markdown/`).
 * - `"commonmark"`: the platform renders Markdown itself; the text goes out as written.
 * - `"plain"`: the text goes out as written and nothing renders it (a terminal), so the core does
 *   not repair intermediate texts either.
 */
export type MarkdownDialect = MarkdownEmitter | "commonmark" | "plain";

/** What a platform can do, so the core can adapt its behaviour. */
export interface ChannelCapabilities {
  /**
   * Longest text of one message as the platform counts it: measured on the converted text when
   * `markdown` is an emitter (its `measure`, by default the JS string length), else on the Markdown.
   */
  maxTextLength: number;
  /** Minimum time between two edits (or stream updates) of one message. */
  minEditIntervalMs: number;
  /** Messages can be edited after sending, so replies can stream by edits. */
  edits: boolean;
  /** Messages can carry buttons that come back as clicks. */
  buttons: boolean;
  /** Replies can go into a thread under the user's message. */
  threads: boolean;
  /** How the platform shows Markdown: its emitter, or text as written (see {@link MarkdownDialect}). */
  markdown: MarkdownDialect;
  /** Most buttons one question may carry; more options fall back to a numbered list. */
  maxButtons?: number;
  /** How long one typing indicator lasts; the core repeats it this often. Default 4000. */
  typingIntervalMs?: number;
  /**
   * False when the platform never delivers an event again (Discord's Gateway): a message the
   * sink could not record would be lost, so the sink the core hands the channel tries recording
   * again a few times (after 250 ms, 1 s and 2.5 s) and, when it never succeeds, tells the chat
   * it could not take the message (see {@link SinkOptions}) before it throws. Default true: the
   * sink throws at once, and the platform delivers the event again.
   */
  redelivers?: boolean;
  /**
   * The channel shows {@link OutboundContent.progress} itself (a card section, a collapsible
   * panel). Absent or false: the core writes the progress view as lines under the reply's text.
   */
  progressView?: boolean;
}

/** Direct (one-to-one) or group conversation. */
export type ChatType = "direct" | "group";

/** JSON value, for adapter-specific fields that must survive storage (the store's own `Json`). */
export type JsonValue = Json;

/** Where to post in a conversation. Built by the adapter, stored by the core, handed back to the adapter. */
export interface ConversationRef {
  /** Name of the channel instance (the key under `channels:` in config). */
  channel: string;
  /** Conversation key, `<channel>:<workspace>:<chat>[:<thread>]`. */
  key: string;
  /** Platform chat id (Telegram chat id, Slack channel id, Feishu chat_id, DingTalk conversationId, Discord channel). */
  chatId: string;
  /** Platform thread to post into (Slack thread_ts, Telegram message_thread_id, Feishu root message). */
  threadId?: string;
  /** Platform id of the user's message to reply to, when replies should quote it. */
  replyToId?: string;
  chatType: ChatType;
  /** The platform's workspace: Slack team id, Feishu tenant key, DingTalk corp id, Discord server id; routes match on it. */
  workspace?: string;
  /** Adapter-specific data needed to post (e.g. a DingTalk sessionWebhook). */
  extra?: { [k: string]: JsonValue };
}

/** A sent message, as the adapter needs it to edit the message later. */
export interface MessageHandle {
  /** Platform message id (Slack ts, Telegram message_id, Feishu message_id, …). */
  id: string;
  /** The conversation it was posted in. */
  ref: ConversationRef;
  /** Adapter-specific data needed to edit (e.g. a card id). */
  extra?: { [k: string]: JsonValue };
}

/** One button of a question. */
export interface ButtonSpec {
  /** Short id carried in the click payload (kept small: Telegram allows 64 bytes). */
  id: string;
  /** Text on the button. */
  label: string;
}

/** What to show. `text` is Markdown; the adapter converts it to the platform's dialect. */
export interface OutboundContent {
  text: string;
  /** Buttons under the message. An empty list on an edit removes the old buttons. */
  buttons?: ButtonSpec[];
  /**
   * Id of the question the buttons answer. The adapter puts `questionId` and the button id in
   * each click payload and gives both back in {@link InboundAction}.
   */
  questionId?: string;
  /**
   * What the agent is doing, for a channel with `capabilities.progressView`: it shows it beside
   * the text (a card section, a panel). Other channels never get it: the core writes the view
   * into `text` for them.
   */
  progress?: ProgressContent;
}

/** A button click, as the adapter decoded it. */
export interface InboundAction {
  questionId: string;
  /** `ButtonSpec.id` of the clicked button. */
  buttonId: string;
  /** The message that carried the buttons, when the platform says. */
  messageId?: string;
  /**
   * The platform's handle for answering this click (a Telegram callback_query id, a Feishu
   * event id), set by adapters that implement {@link Channel.answerAction}.
   */
  callbackId?: string;
}

/** What an attachment is, as far as the agent cares. */
export type AttachmentKind = "image" | "file" | "audio";

/**
 * A file, image or voice note that came with a message. It holds only what the platform said
 * about it; the core downloads it through {@link Channel.download} when the message runs, after
 * checking its type and size against `media:`. JSON, like the rest of the message.
 */
export interface InboundAttachment {
  /** `image` (photos, pasted screenshots), `audio` (voice notes and audio files), else `file`. */
  kind: AttachmentKind;
  /** The file name as sent (the core makes it safe); a made-up one like `photo.jpg` when there is none. */
  name: string;
  /** MIME type, when the platform says. */
  mime?: string;
  /** Size in bytes, when the platform says before the download. */
  size?: number;
  /** What the adapter needs to download it (a Telegram file_id, a Slack url_private, …). */
  source: { [k: string]: JsonValue };
}

/** How the core bounds one {@link Channel.download}. */
export interface DownloadOptions {
  /**
   * Aborts the download: the conversation's `/stop`, or the whole download's time limit
   * (`media.download_timeout_ms`). Pass it to every request the download makes; the core also
   * stops waiting on its own when it aborts, so an adapter that cannot pass it still never holds
   * the conversation.
   */
  signal?: AbortSignal;
}

/** A file the agent sends (`send_file`), posted as a native upload after the reply text. */
export interface OutboundFile {
  /** Base name, already safe. */
  name: string;
  mime: string;
  data: Uint8Array;
  /** `image` is shown inline where the platform can (a photo); `file` is a document to download. */
  kind: "image" | "file";
}

/** One thing a user did in a chat, translated by the adapter. */
export interface InboundMessage {
  /** Name of the channel instance. */
  channel: string;
  /** The platform's id of this delivery (update_id, event_id, …); redeliveries repeat it. */
  eventId: string;
  /** Where the conversation is and how to reply. `ref.key` is the conversation key. */
  ref: ConversationRef;
  /** Sender. */
  user: { id: string; name?: string };
  /** Text with the bot mention removed and surrounding space trimmed. Empty for a click. */
  text: string;
  /** The bot was @mentioned, replied to, or addressed by command. Always true in direct chats. */
  mentioned: boolean;
  /**
   * The message is a reply inside a platform thread or topic whose conversation key is that
   * thread. In groups the core then treats it as addressed to the bot when it already holds a
   * conversation for `ref.key` — a thread the bot is part of — also after a restart.
   */
  inThread?: boolean;
  /** The sender is a bot (this bot or another); the core ignores such messages. */
  fromBot?: boolean;
  /** Set when this is a button click rather than a message. */
  action?: InboundAction;
  /** Files, images and voice notes sent with the message (a caption is its `text`). */
  attachments?: InboundAttachment[];
  /** When the platform says the user sent it (ms since epoch), else when it arrived. */
  sentAt: number;
  /** Set by the core for turns nobody typed (an API call, a schedule); adapters never set it. */
  origin?: TurnOrigin;
}

/**
 * Where an adapter hands what it received. It resolves once the core has durably recorded the
 * message (or decided to drop it), so the adapter acks the platform after `await sink(msg)`.
 */
export type InboundSink = (message: InboundMessage, options?: SinkOptions) => Promise<void>;

/** How a channel hands one message over. */
export interface SinkOptions {
  /**
   * The adapter tells the sender itself when the message could not be taken (an interaction's
   * own reply, a click's answer), so the core sends no notice to the chat for it.
   */
  answersSender?: boolean;
}

/**
 * Lifecycle state shown in status. `standby`: an exclusive channel (see `Channel.exclusive`) that
 * another gateway replica runs; this one takes over when that replica stops.
 */
export type ChannelState = "starting" | "running" | "degraded" | "stopped" | "failed" | "disabled" | "standby";

/** What an adapter reports about itself. The core adds counters and timestamps. */
export interface ChannelStatus {
  state: ChannelState;
  /** Connected to the platform right now (socket open, last poll succeeded, webhook set). */
  connected: boolean;
  /** Transport in use, e.g. `polling`, `webhook`, `socket`, `http`, `websocket`, `stream`. */
  mode: string;
  /** Why the channel is disabled or failed. */
  reason?: string;
  /** The last platform error, if any. */
  lastError?: { message: string; at: number } | null;
}

/** A platform-native stream (Slack chat streams, Feishu CardKit, DingTalk AI cards). */
export interface NativeStream {
  /** The message that shows the stream. */
  readonly handle: MessageHandle;
  /** Shows `text` (the whole reply so far, Markdown). The core paces calls at `minEditIntervalMs`. */
  update(text: string): Promise<void>;
  /** Shows the final `text` and closes the stream. */
  finish(text: string): Promise<void>;
  /** Closes the stream after a failure, showing `text` if the platform can. Must not throw. */
  abort(text: string): Promise<void>;
  /**
   * Shows the progress view beside the streamed text (Slack task or status updates, a card
   * section). Paced by the core like `update`. Absent: a stream shows no progress view.
   */
  progress?(view: ProgressContent): Promise<void>;
}

/** Limits of a native stream; past either, the core finishes it and starts a new one. */
export interface NativeStreamLimits {
  /** Counted like `capabilities.maxTextLength`: on the converted text when the channel has an emitter. */
  maxTextLength: number;
  maxDurationMs: number;
}

/**
 * The HTTP server, as one channel sees it: it mounts routes on Antler's one port and takes down
 * only its own. Mount a webhook with `mountWebhook` (webhook-route.ts): the core's path for every
 * channel is `/webhooks/<channel name>`.
 */
export interface HttpMount {
  /**
   * Mounts a route; throws `RouteConflictError` (naming both channels) when the path is taken.
   * `maxBodyBytes` lifts `server.max_body_bytes` for this route alone (the web chat's uploads).
   */
  route(method: string, path: string, handler: RouteHandler, options?: { maxBodyBytes?: number }): void;
  /** Takes down this channel's routes at `path`, or all of them; other channels' routes stay. */
  unroute(path?: string): void;
}

/** A message that waits for a click: an open question, or an open call of a tool approval. */
export interface WaitingMessage {
  /** What it shows, buttons included, as it was sent. */
  content: OutboundContent;
  /** Where it was posted, when it was. */
  posted?: MessageHandle;
}

/** A conversation as a channel shows it again, e.g. a web page after a reload. */
export interface ConversationHistory {
  /** The thread's messages, read from its checkpoint, oldest first. */
  messages: HistoryEntry[];
  /** What waits for the user's click now, in the order it was asked. */
  waiting: WaitingMessage[];
}

/** What the registry passes to a channel's constructor. */
export interface ChannelContext<C = unknown> {
  /** Instance name: the key under `channels:`. Prefix of every conversation key. */
  name: string;
  /** The channel's config section, already checked by the class's `configSchema` if it has one. */
  config: C;
  logger: Logger;
  /** Antler's HTTP server, for webhook modes. */
  http: HttpMount;
  /** Folder of the config file, for relative paths. */
  baseDir: string;
  /**
   * Reads one of this channel's conversations back, by key: what a page shows after a reload.
   * Absent when the channel runs outside a gateway.
   */
  history?: (key: string) => Promise<ConversationHistory>;
  /** The server's base URL (`http://host:port`) once it listens, for links in logs; absent when it does not. */
  serverUrl?: () => string | undefined;
  /** `media.max_file_mb` in bytes: the largest file a user may send. Absent outside a gateway. */
  maxFileBytes?: number;
}

/**
 * A chat platform adapter. Required: lifecycle, `send`, `edit`, `status`, `capabilities`.
 * Optional capabilities are feature-detected by the core.
 */
export interface Channel {
  readonly name: string;
  readonly capabilities: ChannelCapabilities;
  /** Connects and starts delivering inbound messages to `sink`. Throws if it cannot start. */
  start(sink: InboundSink): Promise<void>;
  /** Disconnects and releases every handle. Idempotent. */
  stop(): Promise<void>;
  /**
   * Stops taking inbound events at once (the poll loop, the socket, the stream) while `send`,
   * `edit` and the other outbound calls keep working until `stop()`. Resolves once no further
   * event will be fetched. An exclusive channel that has it hands its connection to another
   * replica at once on a clean stop or a lost lease, and its running replies still finish.
   */
  stopIntake?(): Promise<void>;
  status(): ChannelStatus;
  /** Posts a new message. Throws typed errors from src/errors.ts (rate limit, not found, …). */
  send(ref: ConversationRef, content: OutboundContent, options?: SendOptions): Promise<MessageHandle>;
  /** Replaces a message's content. Unchanged content may throw `NotModifiedError`; the core ignores it. */
  edit(handle: MessageHandle, content: OutboundContent): Promise<void>;

  /** Shows "typing…" (or the platform's equivalent) for about `typingIntervalMs`. */
  typing?(ref: ConversationRef): Promise<void>;
  /** Clears a typing indicator that does not clear itself (e.g. a reaction). */
  typingDone?(ref: ConversationRef): Promise<void>;
  /** Minimum edit interval for this conversation, when it differs from the capability (groups). */
  editIntervalMs?(ref: ConversationRef): number;
  /** Starts a native stream, or returns undefined when the conversation cannot stream natively. */
  startStream?(ref: ConversationRef): Promise<NativeStream | undefined>;
  /** Limits of native streams, when `startStream` exists. */
  readonly streamLimits?: NativeStreamLimits;
  /** Checks credentials against the platform for `antler doctor`; resolves to a one-line summary. */
  check?(): Promise<string>;
  /** Access rules from the channel's config; absent = everyone, mention required in groups. */
  readonly access?: AccessRules;
  /**
   * Answers a click (`msg.action`) privately: `notice` (plain text, not Markdown) shows only to
   * the user who clicked (a Telegram alert, a Feishu toast); without `notice` the click is only acknowledged. The core
   * calls it at most once per click it handles; an adapter that holds a click open for this
   * answers it on its own after a short wait. Resolves false when the click can no longer be
   * answered, and the core then shows `notice` another way (`notifyUser`, else a notice).
   */
  answerAction?(msg: InboundMessage, notice?: string): Promise<boolean>;
  /**
   * Downloads one of `msg`'s attachments through the platform's API. Reads at most `maxBytes`:
   * past that it stops and throws `FileTooLargeError` (errors.ts), keeping nothing. When
   * `options.signal` aborts (the user's `/stop`, or `media.download_timeout_ms` passing) every
   * request of the download ends, its body included, and the promise rejects.
   */
  download?(msg: InboundMessage, attachment: InboundAttachment, maxBytes: number, options?: DownloadOptions): Promise<Uint8Array>;
  /** Posts a file as a native upload (a document or photo) in the conversation of `ref`. */
  sendFile?(ref: ConversationRef, file: OutboundFile, options?: SendOptions): Promise<MessageHandle>;
  /**
   * Turns a target nobody wrote from into a ref to post to (a DM opened, a chat checked), with
   * the key its conversation has when people write there. Throws `TargetUnreachableError` with
   * the platform's reason when the bot cannot post there (a user who never started it, closed DMs).
   */
  resolveTarget?(target: SendTarget): Promise<ConversationRef>;
  /** The largest file `sendFile` can post, in bytes, when the platform has a lower limit than `media.max_file_mb`. */
  readonly maxUploadBytes?: number;
  /**
   * Only one process may hold this bot's connection at a time (long polling, a socket, a
   * stream): with several gateway replicas, only the channel's leader starts it, and the others
   * stand by to take over. Absent or false: every replica runs it (webhooks, the web chat).
   */
  readonly exclusive?: boolean;
  /**
   * A page on Antler's own server where people chat through this channel (the web chat's path,
   * e.g. `/chat`); the status page and the start-up log link to it.
   */
  readonly link?: string;
  /**
   * Shows `text` to one user only, in the conversation of `ref` (a Slack ephemeral message).
   * `text` is plain text, like {@link answerAction}'s notice: show it as written, not as Markdown.
   * Resolves false when the platform refuses; the core then posts a notice everyone sees.
   */
  notifyUser?(ref: ConversationRef, userId: string, text: string): Promise<boolean>;
}

/** A channel class as the registry loads it. `configSchema` checks and types its config section. */
export interface ChannelClass {
  new (ctx: ChannelContext<never>): Channel;
  /** zod schema of the config section (without `enabled`/`use`, which the core reads). */
  configSchema?: ZodType;
  /** Keys and values renamed since an older version: still accepted, with a deprecation warning. */
  configRenames?: ConfigRenames;
}

/** Method names every channel must have; the registry checks them before use. */
export const REQUIRED_CHANNEL_METHODS = ["start", "stop", "status", "send", "edit"] as const;

/** Who may talk to the bot and when. Adapters fill it from their config; the core enforces it. */
export interface AccessRules {
  /** User ids allowed to talk to the bot and click its buttons; empty = everyone. */
  allowedUsers: string[];
  /** Chat ids the bot answers in; empty = every chat. */
  allowedChats: string[];
  /** In group chats, answer only when the bot is mentioned (or replied to). */
  requireMention: boolean;
  /**
   * User ids who may answer anyone's pending question in a group. Others may answer only the
   * questions their own messages led to. Absent or empty = only the asker.
   */
  approvers?: string[];
}
