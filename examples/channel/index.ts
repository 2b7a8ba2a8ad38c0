/**
 * Relay: a chat platform over plain HTTP, as a channel loaded by `use:`. It is written the way
 * Antler's built-in adapters are, from the public entry points only (`antler/channel`):
 *
 * - inbound: the relay POSTs each event as JSON to the channel's webhook, `/webhooks/<name>` on
 *   Antler's own port. The channel answers 200 once the core has recorded it, so a 500 (the core
 *   could not) makes the relay deliver it again;
 * - outbound: sends, edits and files are JSON POSTs to `outbox_url` (transport.ts);
 * - files the user sent are downloaded from their URL, never holding more than the limit.
 *
 * It only translates: the core dedupes, queues, paces edits, chunks, retries and checks access.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type AccessRules,
  accessRulesFrom,
  type ChannelCapabilities,
  type ChannelContext,
  ChannelError,
  type ConversationRef,
  type DownloadOptions,
  FileTooLargeError,
  fetchBounded,
  HttpError,
  type HttpMount,
  type InboundAttachment,
  type InboundMessage,
  type InboundSink,
  LifecycleChannel,
  type Logger,
  type MessageHandle,
  mountWebhook,
  type OutboundContent,
  type OutboundFile,
  plainEmitter,
  readJson,
  renderMarkdown,
  sendJson,
  tokenMatches,
} from "antler/channel";
import { RelayConfig } from "./config.js";
import { eventToInbound, parseEvent } from "./inbound.js";
import { mapRelayError } from "./map-error.js";
import { Outbox, type OutboxCall, type Posted, type Shown } from "./transport.js";

/** Failures that say nothing about the relay's health, so they stay out of the channel's status. */
const NOT_A_FAULT = new Set(["rate_limited", "not_modified"]);

export class RelayChannel extends LifecycleChannel {
  /** The registry checks `channels.<name>` with it before constructing the channel. */
  static readonly configSchema = RelayConfig;

  readonly capabilities: ChannelCapabilities;
  readonly access: AccessRules;
  private readonly config: RelayConfig;
  private readonly http: HttpMount;
  private readonly logger: Logger;
  private readonly outbox: Outbox;
  private sink: InboundSink | undefined;

  constructor(ctx: ChannelContext<RelayConfig>) {
    super(ctx.name, "webhook");
    this.config = ctx.config;
    this.http = ctx.http;
    this.logger = ctx.logger;
    this.outbox = new Outbox(ctx.config.outbox_url, ctx.config.secret);
    this.access = accessRulesFrom(ctx.config);
    this.capabilities = {
      maxTextLength: ctx.config.max_text_length,
      minEditIntervalMs: 100,
      edits: true,
      buttons: true,
      threads: false,
      // The relay shows plain text: the shared plain emitter writes Markdown as a person reads it.
      markdown: plainEmitter,
    };
  }

  protected async open(sink: InboundSink): Promise<void> {
    this.sink = sink;
    mountWebhook(this.http, this.name, (req, res) => this.onEvent(req, res));
  }

  protected async close(): Promise<void> {
    this.http.unroute();
    this.sink = undefined;
  }

  async send(ref: ConversationRef, content: OutboundContent): Promise<MessageHandle> {
    return { id: await this.post("send", { op: "send", room: ref.chatId, ...this.shown(content) }), ref };
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    await this.call("edit", { op: "edit", room: handle.ref.chatId, id: handle.id, ...this.shown(content) });
  }

  async sendFile(ref: ConversationRef, file: OutboundFile): Promise<MessageHandle> {
    const data = Buffer.from(file.data).toString("base64");
    const call = { op: "file", room: ref.chatId, name: file.name, mime: file.mime, kind: file.kind, data } as const;
    return { id: await this.post("sending a file", call), ref };
  }

  /** Reads at most `maxBytes` of the file: past that `fetchBounded` throws `FileTooLargeError`. */
  async download(_msg: InboundMessage, attachment: InboundAttachment, maxBytes: number, options: DownloadOptions = {}) {
    const url = String(attachment.source.url);
    try {
      return await fetchBounded(this.name, url, maxBytes, {
        headers: this.outbox.auth,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (err) {
      // A file over the limit is the sender's doing and a download the core stopped is nobody's fault.
      if (!(err instanceof FileTooLargeError) && !options.signal?.aborted) this.life.noteError(err);
      throw err;
    }
  }

  /** What the relay shows for `content`: plain text, and the question's buttons. */
  private shown(content: OutboundContent): Shown {
    return {
      text: renderMarkdown(content.text, plainEmitter),
      ...(content.buttons ? { buttons: content.buttons } : {}),
      ...(content.questionId ? { question: content.questionId } : {}),
    };
  }

  /** A send or a file: the relay answers with the new message's id. */
  private async post(what: string, call: OutboxCall): Promise<string> {
    const { id } = await this.call(what, call);
    if (!id) throw new ChannelError(this.name, "platform_error", `${what} failed: the relay answered without a message id`);
    return id;
  }

  /** One outbound call: its failure mapped once, and noted on the status when it is the relay's. */
  private async call(what: string, call: OutboxCall): Promise<Partial<Posted>> {
    try {
      return await this.outbox.post(call);
    } catch (err) {
      const mapped = mapRelayError(this.name, err, what);
      if (!NOT_A_FAULT.has(mapped.code)) this.life.noteError(mapped);
      throw mapped;
    }
  }

  /**
   * One inbound event. Refusals are thrown as `HttpError` (the server answers and logs them): bad
   * input gets a 4xx, which the relay does not retry. Only a failure of the core's sink answers
   * 500, so the event is delivered again.
   */
  private async onEvent(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const presented = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
    if (!tokenMatches(presented, this.config.secret)) throw new HttpError(401, "wrong or missing bearer token");
    const event = parseEvent(await readJson(req));
    const sink = this.sink;
    if (!sink) throw new HttpError(503, "the channel is not running");
    this.logger.debug({ event: event.id, room: event.room }, "relay event");
    await sink(eventToInbound(this.name, event));
    sendJson(res, 200, { ok: true });
  }
}
