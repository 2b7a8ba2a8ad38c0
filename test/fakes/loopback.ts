/**
 * An in-memory chat platform and its channel adapter, for testing the shared core with no SDK.
 * The world behaves like a strict platform: it rejects unchanged edits, text over the limit,
 * and edits faster than the platform allows (429). Tests can inject failures and read what a
 * user would see, with the time each version appeared.
 */
import { marked } from "marked";
import { z } from "zod";
import { accessConfigShape } from "../../src/channels/kit/access.js";
import { LifecycleChannel } from "../../src/channels/kit/lifecycle.js";
import type {
  Channel,
  ChannelCapabilities,
  ChannelContext,
  ConversationRef,
  InboundAttachment,
  InboundMessage,
  InboundSink,
  MessageHandle,
  NativeStream,
  NativeStreamLimits,
  OutboundContent,
  OutboundFile,
} from "../../src/channels/types.js";
import {
  ChannelError,
  FileTooLargeError,
  NotModifiedError,
  PlatformNotFoundError,
  PlatformRateLimitError,
} from "../../src/errors.js";
import { htmlText } from "./web/html.js";

export interface LoopbackMessage {
  id: string;
  chatId: string;
  chatType: "direct" | "group";
  threadId?: string;
  text: string;
  buttons: Array<{ id: string; label: string }>;
  questionId?: string;
  versions: Array<{ text: string; at: number }>;
  fromBot: boolean;
  /** Set on messages shown by a native stream: whether it is still streaming. */
  stream?: { state: "open" | "finished" | "aborted"; startedAt: number };
}

type Op = "send" | "edit" | "typing" | "stream";
interface Fault {
  op: Op;
  /** Fail this many of the next calls. */
  remaining: number;
  error: () => Error;
}

const worlds = new Map<string, LoopbackWorld>();
let nextWorld = 1;

export interface LoopbackOptions {
  maxTextLength?: number;
  minEditIntervalMs?: number;
  edits?: boolean;
  buttons?: boolean;
  /** Reject an edit that comes sooner than minEditIntervalMs after the last one with 429. */
  enforceEditInterval?: boolean;
  /** How long one typing indicator lasts (the channel's `typingIntervalMs`). Default 1000. */
  typingIntervalMs?: number;
  /**
   * Give the channel native streams (`startStream`) with these limits. Like Slack's streams, an
   * update past `maxDurationMs` fails (expired), as does any call on a finished stream, and an
   * open stream's message cannot be edited.
   */
  nativeStream?: Partial<NativeStreamLimits>;
  /**
   * Give the channel `answerAction` and `notifyUser`: a notice for one user shows to them alone
   * (recorded in `privateNotices`). Without it the core must fall back to notices everyone sees.
   */
  privateNotices?: boolean;
}

/** A notice only one user saw: a click's answer, or a message shown to them alone. */
export interface PrivateNotice {
  userId: string;
  chatId: string;
  text: string;
  via: "click" | "message";
}

/** Calls the world can leave unanswered. */
export type HangOp = "send" | "edit" | "download" | "sendFile";

/** The fake platform. One world can serve several channel instances (restarts). */
export class LoopbackWorld {
  readonly id = `world${nextWorld++}`;
  readonly messages: LoopbackMessage[] = [];
  readonly typing: Array<{ chatId: string; at: number }> = [];
  readonly calls: Array<{ op: Op | "rejected"; at: number; detail?: string }> = [];
  readonly delivered: InboundMessage[] = [];
  readonly privateNotices: PrivateNotice[] = [];
  /** Event ids of clicks the channel answered (with a notice or without); a click is answered once. */
  readonly answeredClicks: string[] = [];
  private readonly faults: Fault[] = [];
  private rateLimitRatio = 0;
  private rateLimitMs = 0;
  private blockedUntil = 0;
  private seq = 1;
  private sink: InboundSink | undefined;
  channel: LoopbackChannel | undefined;
  /** When set, the platform refuses connections (like a revoked token): start() throws this. */
  startError: (() => Error) | undefined;
  /** How many times a channel connected to this world. */
  starts = 0;
  /** Channel instances connected now (started and not stopped): more than one is a leak. */
  readonly live = new Set<LoopbackChannel>();
  /** Calls that will never be answered, by kind (a platform that hangs). */
  private readonly hangs: Partial<Record<HangOp, number>> = {};

  /** The next `count` calls of `op` never get an answer. */
  hangNext(op: HangOp, count = 1): void {
    this.hangs[op] = (this.hangs[op] ?? 0) + count;
  }

  /** Called by the channel: waits forever when a hang is due for `op`. */
  async maybeHang(op: HangOp): Promise<void> {
    const left = this.hangs[op] ?? 0;
    if (left <= 0) return;
    this.hangs[op] = left - 1;
    this.calls.push({ op: "rejected", at: Date.now(), detail: "hung" });
    await new Promise<never>(() => {});
  }

  /** When set, connecting waits for it (a platform that is slow to answer). */
  startGate: Promise<void> | undefined;

  constructor(readonly options: LoopbackOptions = {}) {
    worlds.set(this.id, this);
  }

  static get(id: string): LoopbackWorld {
    const world = worlds.get(id);
    if (!world) throw new Error(`no loopback world ${id}`);
    return world;
  }

  attach(channel: LoopbackChannel, sink: InboundSink | undefined): void {
    this.channel = channel;
    this.sink = sink;
  }

  /** Config section for `channels.<name>` that makes the registry load a LoopbackChannel on this world. */
  channelConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { enabled: true, use: `${import.meta.dirname}/loopback.ts:LoopbackChannel`, world: this.id, ...extra };
  }

  /** Fail the next `count` calls of `op` with `error`. */
  failNext(op: Op, count: number, error: () => Error): void {
    this.faults.push({ op, remaining: count, error });
  }

  /** Answer a share of edits with 429 (retry after `retryAfterMs`). Calls before that time are counted as violations. */
  rateLimitEdits(ratio: number, retryAfterMs: number): void {
    this.rateLimitRatio = ratio;
    this.rateLimitMs = retryAfterMs;
  }

  /** Calls made while a retry-after was in force. */
  get violations(): number {
    return this.calls.filter((c) => c.op === "rejected" && c.detail === "during retry_after").length;
  }

  /** A user message arrives. Returns the InboundMessage handed to the core. */
  async userSays(
    text: string,
    opts: {
      chatId?: string;
      userId?: string;
      chatType?: "direct" | "group";
      mentioned?: boolean;
      eventId?: string;
      threadId?: string;
      userName?: string;
    } = {},
  ): Promise<InboundMessage> {
    const chatId = opts.chatId ?? "dm1";
    const channel = this.requireChannel();
    const ref: ConversationRef = {
      channel: channel.name,
      key: `${channel.name}:w:${chatId}${opts.threadId ? `:${opts.threadId}` : ""}`,
      chatId,
      chatType: opts.chatType ?? "direct",
      ...(opts.threadId ? { threadId: opts.threadId } : {}),
    };
    const msg: InboundMessage = {
      channel: channel.name,
      eventId: opts.eventId ?? `ev${this.seq++}`,
      ref,
      user: { id: opts.userId ?? "u1", name: opts.userName ?? "User One" },
      text,
      mentioned: opts.mentioned ?? ref.chatType === "direct",
      sentAt: Date.now(),
    };
    await this.deliver(msg);
    return msg;
  }

  /** Bytes of the files users sent, by file id; `download` reads them. */
  readonly uploads = new Map<string, Uint8Array>();
  /** Files the bot posted, as a user downloads them. */
  readonly sentFiles: Array<{ chatId: string; name: string; mime: string; data: Uint8Array; kind: "image" | "file" }> = [];

  /** The user sends a file (with an optional caption) in the DM. */
  async userSendsFile(file: {
    kind: "image" | "file" | "audio";
    name: string;
    mime: string;
    data: Uint8Array;
    caption?: string;
  }): Promise<InboundMessage> {
    const fileId = `file${this.seq}`;
    this.uploads.set(fileId, new Uint8Array(file.data));
    const channel = this.requireChannel();
    const msg: InboundMessage = {
      channel: channel.name,
      eventId: `ev${this.seq++}`,
      ref: { channel: channel.name, key: `${channel.name}:w:dm1`, chatId: "dm1", chatType: "direct" },
      user: { id: "u1", name: "User One" },
      text: file.caption ?? "",
      mentioned: true,
      attachments: [{ kind: file.kind, name: file.name, mime: file.mime, size: file.data.byteLength, source: { fileId } }],
      sentAt: Date.now(),
    };
    await this.deliver(msg);
    return msg;
  }

  /** Delivers a message exactly as given (a redelivery repeats an earlier one). */
  async deliver(msg: InboundMessage): Promise<void> {
    if (!this.sink) throw new Error("loopback channel is not started");
    this.delivered.push(msg);
    await this.sink(msg);
  }

  /** The user clicks the button labelled `label` on the newest message (in `chatId`, if given) showing it. */
  async click(label: string, opts: { userId?: string; userName?: string; chatId?: string } = {}): Promise<InboundMessage> {
    const message = [...this.messages]
      .reverse()
      .find((m) => (!opts.chatId || m.chatId === opts.chatId) && m.buttons.some((b) => b.label === label));
    if (!message) throw new Error(`no message shows a button "${label}"`);
    return this.clickOn(message, label, opts);
  }

  /** The user clicks the button labelled `label` on `message`. */
  async clickOn(
    message: LoopbackMessage,
    label: string,
    opts: { userId?: string; userName?: string } = {},
  ): Promise<InboundMessage> {
    const button = message.buttons.find((b) => b.label === label);
    if (!button) throw new Error(`message ${message.id} shows no button "${label}"`);
    const channel = this.requireChannel();
    const thread = message.threadId ? `:${message.threadId}` : "";
    const msg: InboundMessage = {
      channel: channel.name,
      eventId: `click${this.seq++}`,
      ref: {
        channel: channel.name,
        key: `${channel.name}:w:${message.chatId}${thread}`,
        chatId: message.chatId,
        chatType: message.chatType,
        ...(message.threadId ? { threadId: message.threadId } : {}),
      },
      user: { id: opts.userId ?? "u1", ...(opts.userName ? { name: opts.userName } : {}) },
      text: "",
      mentioned: true,
      action: { questionId: message.questionId ?? "", buttonId: button.id, messageId: message.id },
      sentAt: Date.now(),
    };
    await this.deliver(msg);
    return msg;
  }

  botMessages(chatId = "dm1"): LoopbackMessage[] {
    return this.messages.filter((m) => m.chatId === chatId && m.fromBot);
  }

  /** Texts only `userId` was shown (click answers, messages for them alone), oldest first. */
  privateNoticesFor(userId: string, chatId?: string): string[] {
    return this.privateNotices.filter((n) => n.userId === userId && (!chatId || n.chatId === chatId)).map((n) => n.text);
  }

  // ---- the platform side, called by the channel ----

  send(ref: ConversationRef, content: OutboundContent): LoopbackMessage {
    this.gate("send");
    this.checkLength(content.text);
    const message: LoopbackMessage = {
      id: `m${this.seq++}`,
      chatId: ref.chatId,
      chatType: ref.chatType,
      ...(ref.threadId ? { threadId: ref.threadId } : {}),
      text: content.text,
      buttons: content.buttons ?? [],
      ...(content.questionId ? { questionId: content.questionId } : {}),
      versions: [{ text: content.text, at: Date.now() }],
      fromBot: true,
    };
    this.messages.push(message);
    return message;
  }

  edit(id: string, content: OutboundContent): void {
    const message = this.messages.find((m) => m.id === id);
    if (!message) throw new PlatformNotFoundError(this.channel?.name ?? "loopback", "message to edit not found");
    this.gate("edit");
    if (message.stream?.state === "open")
      throw new ChannelError("loopback", "platform_error", "streaming_state_conflict: message is streaming");
    const now = Date.now();
    const interval = this.options.minEditIntervalMs ?? 0;
    const last = message.versions.at(-1)?.at ?? 0;
    if (this.options.enforceEditInterval && now - last < interval) {
      this.calls.push({ op: "rejected", at: now, detail: "edit too fast" });
      throw new PlatformRateLimitError("loopback", interval - (now - last));
    }
    const buttons = content.buttons ?? message.buttons;
    if (content.text === message.text && sameButtons(buttons, message.buttons)) {
      throw new NotModifiedError("loopback");
    }
    this.checkLength(content.text);
    message.text = content.text;
    message.buttons = buttons;
    message.versions.push({ text: content.text, at: now });
  }

  startStream(ref: ConversationRef): LoopbackMessage {
    this.gate("stream");
    const message: LoopbackMessage = {
      id: `m${this.seq++}`,
      chatId: ref.chatId,
      chatType: ref.chatType,
      ...(ref.threadId ? { threadId: ref.threadId } : {}),
      text: "",
      buttons: [],
      versions: [],
      fromBot: true,
      stream: { state: "open", startedAt: Date.now() },
    };
    this.messages.push(message);
    return message;
  }

  /** Shows `text` in an open stream; `close` ends it as finished or aborted. */
  streamText(id: string, text: string, close?: "finished" | "aborted"): void {
    const message = this.messages.find((m) => m.id === id);
    if (!message?.stream) throw new PlatformNotFoundError(this.channel?.name ?? "loopback", "stream not found");
    if (close !== "aborted") this.gate("stream");
    const now = Date.now();
    const limits = this.streamLimits();
    if (message.stream.state !== "open") throw new ChannelError("loopback", "platform_error", "message is not streaming");
    if (now - message.stream.startedAt > limits.maxDurationMs) {
      message.stream.state = "aborted";
      throw new ChannelError("loopback", "platform_error", "the stream expired");
    }
    const last = message.versions.at(-1)?.at ?? 0;
    if (close !== "aborted" && this.options.enforceEditInterval && now - last < (this.options.minEditIntervalMs ?? 0)) {
      this.calls.push({ op: "rejected", at: now, detail: "stream update too fast" });
      throw new PlatformRateLimitError("loopback", (this.options.minEditIntervalMs ?? 0) - (now - last));
    }
    if (text.length > limits.maxTextLength) throw new ChannelError("loopback", "content_rejected", "stream text is too long");
    if (close) message.stream.state = close;
    if (text === message.text) {
      if (close) return;
      throw new NotModifiedError("loopback");
    }
    message.text = text;
    message.versions.push({ text, at: now });
  }

  streamLimits(): NativeStreamLimits {
    return { maxTextLength: 4096, maxDurationMs: 60_000, ...this.options.nativeStream };
  }

  /** A click's answer: shown to the clicker alone; false for a click already answered. */
  answerClick(msg: InboundMessage, notice?: string): boolean {
    if (this.answeredClicks.includes(msg.eventId)) return false;
    this.answeredClicks.push(msg.eventId);
    if (notice) this.privateNotices.push({ userId: msg.user.id, chatId: msg.ref.chatId, text: notice, via: "click" });
    return true;
  }

  noteTyping(chatId: string): void {
    this.gate("typing");
    this.typing.push({ chatId, at: Date.now() });
  }

  private gate(op: Op): void {
    const now = Date.now();
    if (now < this.blockedUntil) {
      this.calls.push({ op: "rejected", at: now, detail: "during retry_after" });
      throw new PlatformRateLimitError("loopback", this.blockedUntil - now);
    }
    const fault = this.faults.find((f) => f.op === op && f.remaining > 0);
    if (fault) {
      fault.remaining--;
      this.calls.push({ op: "rejected", at: now, detail: "injected" });
      throw fault.error();
    }
    if (op === "edit" && this.rateLimitRatio > 0 && Math.random() < this.rateLimitRatio) {
      this.blockedUntil = now + this.rateLimitMs;
      this.calls.push({ op: "rejected", at: now, detail: "429" });
      throw new PlatformRateLimitError("loopback", this.rateLimitMs);
    }
    this.calls.push({ op, at: now });
  }

  private checkLength(text: string): void {
    const max = this.options.maxTextLength ?? 4096;
    if (text.length === 0) throw new ChannelError("loopback", "content_rejected", "message text is empty");
    if (text.length > max)
      throw new ChannelError("loopback", "content_rejected", `message is too long (${text.length} > ${max})`);
  }

  private requireChannel(): LoopbackChannel {
    if (!this.channel) throw new Error("loopback channel is not attached");
    return this.channel;
  }
}

function sameButtons(a: OutboundContent["buttons"] = [], b: OutboundContent["buttons"] = []): boolean {
  return a.length === b.length && a.every((x, i) => x.id === b[i]?.id && x.label === b[i]?.label);
}

export const LoopbackChannelConfig = z.strictObject({
  world: z.string(),
  // Accepted so tests can set them; the registry reads them from the section (no `access` here).
  ...z.object(accessConfigShape).partial().shape,
  /** A credential, like a real platform's bot token (unused by the fake, but a secret in config). */
  bot_token: z.string().optional(),
  /** A page of its own on the gateway's server, like the web chat's `/chat` (shown as `link`). */
  link: z.string().optional(),
});
export type LoopbackChannelConfig = z.output<typeof LoopbackChannelConfig>;

/** The adapter: translates core calls into world calls, like a real adapter translates into SDK calls. */
export class LoopbackChannel extends LifecycleChannel implements Channel {
  static configSchema = LoopbackChannelConfig;
  readonly capabilities: ChannelCapabilities;
  private readonly world: LoopbackWorld;
  /** Present only when the world has `nativeStream` set. */
  readonly streamLimits?: NativeStreamLimits;
  startStream?: (ref: ConversationRef) => Promise<NativeStream | undefined>;
  /** Present only when the world has `privateNotices` set. */
  answerAction?: (msg: InboundMessage, notice?: string) => Promise<boolean>;
  notifyUser?: (ref: ConversationRef, userId: string, text: string) => Promise<boolean>;
  readonly link?: string;
  constructor(ctx: ChannelContext<LoopbackChannelConfig>) {
    super(ctx.name, "memory");
    this.world = LoopbackWorld.get(ctx.config.world);
    if (ctx.config.link) this.link = ctx.config.link;
    const o = this.world.options;
    this.capabilities = {
      maxTextLength: o.maxTextLength ?? 4096,
      minEditIntervalMs: o.minEditIntervalMs ?? 50,
      edits: o.edits ?? true,
      buttons: o.buttons ?? true,
      threads: false,
      markdown: "commonmark",
      typingIntervalMs: o.typingIntervalMs ?? 1000,
    };
    this.world.attach(this, undefined);
    if (o.nativeStream) {
      this.streamLimits = this.world.streamLimits();
      this.startStream = async (ref) => this.openStream(ref);
    }
    if (o.privateNotices) {
      this.answerAction = async (msg, notice) => this.world.answerClick(msg, notice);
      this.notifyUser = async (ref, userId, text) => {
        this.world.privateNotices.push({ userId, chatId: ref.chatId, text, via: "message" });
        return true;
      };
    }
  }

  protected async open(sink: InboundSink, signal: AbortSignal): Promise<void> {
    this.world.starts++;
    await this.world.startGate;
    const refused = this.world.startError?.();
    if (refused) throw refused;
    if (signal.aborted) return;
    this.world.attach(this, sink);
    this.world.live.add(this);
  }

  /** The connection drops at run time (the platform went away). */
  fail(message: string): void {
    this.life.failed(new Error(message));
  }

  protected async close(): Promise<void> {
    this.world.live.delete(this);
    this.world.attach(this, undefined);
  }

  async send(ref: ConversationRef, content: OutboundContent): Promise<MessageHandle> {
    await this.world.maybeHang("send");
    const message = this.world.send(ref, content);
    return { id: message.id, ref };
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    await this.world.maybeHang("edit");
    this.world.edit(handle.id, content);
  }

  async typing(ref: ConversationRef): Promise<void> {
    this.world.noteTyping(ref.chatId);
  }

  /** Takes no signal, like a `use:` channel written before downloads had one. */
  async download(_msg: InboundMessage, attachment: InboundAttachment, maxBytes: number): Promise<Uint8Array> {
    await this.world.maybeHang("download");
    const data = this.world.uploads.get(String(attachment.source.fileId));
    if (!data) throw new PlatformNotFoundError(this.name, "no such file");
    if (data.byteLength > maxBytes) throw new FileTooLargeError(this.name, maxBytes, data.byteLength);
    return data;
  }

  async sendFile(ref: ConversationRef, file: OutboundFile): Promise<MessageHandle> {
    await this.world.maybeHang("sendFile");
    this.world.sentFiles.push({ chatId: ref.chatId, name: file.name, mime: file.mime, data: file.data, kind: file.kind });
    return { id: `file${this.world.sentFiles.length}`, ref };
  }

  private openStream(ref: ConversationRef): NativeStream {
    const world = this.world;
    const message = world.startStream(ref);
    return {
      handle: { id: message.id, ref },
      update: async (text) => world.streamText(message.id, text),
      finish: async (text) => world.streamText(message.id, text, "finished"),
      abort: async (text) => {
        try {
          world.streamText(message.id, text, "aborted");
        } catch {
          // abort never throws: the stream is closed either way.
          if (message.stream) message.stream.state = "aborted";
        }
      },
    };
  }
}

/**
 * What a person reads of a loopback message: the world keeps the CommonMark it was sent, and a
 * CommonMark platform shows it rendered (here by `marked`, read back as text).
 */
export function shownText(markdown: string): string {
  return htmlText(marked.parse(markdown, { async: false, gfm: true })).trim();
}
