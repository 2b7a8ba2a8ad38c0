/**
 * The web chat: a page on Antler's own server (`/chat` by default) and the small JSON and
 * server-sent-events API behind it. It is a channel like the others, so a message typed in the
 * page goes through the same dispatcher as one from Slack or Telegram, and the reply streams back
 * as edits. See README.md for the wire, the access rules and the choices made.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorMessage } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { HttpError, sendJson } from "../../server/http.js";
import { LifecycleChannel } from "../kit/lifecycle.js";
import type {
  Channel,
  ChannelCapabilities,
  ChannelContext,
  ConversationHistory,
  ConversationRef,
  HttpMount,
  InboundAttachment,
  InboundMessage,
  InboundSink,
  MessageHandle,
  OutboundContent,
  OutboundFile,
  SendOptions,
  SendTarget,
} from "../types.js";
import { type Refusal, WebAuth } from "./auth.js";
import { WebChannelConfig } from "./config.js";
import { FileShelf } from "./files.js";
import { escapeHtml, htmlEmitter, toHtml } from "./format.js";
import { Hub, type WebEvent } from "./hub.js";
import { lastEntryId, Mailbox, type MailItem } from "./mailbox.js";
import { ASSETS, type Asset, loadAssets, PAGE_HEADERS } from "./page.js";
import { CONVERSATION_ID, resolveWebTarget, webRef } from "./targets.js";
import { UploadShelf } from "./uploads.js";
import { type Caller, jsonBody, messageId, pageMessage, pageProgress, sequence, webInbound } from "./wire.js";

/** The longest message the page may send, in characters. */
export const MAX_MESSAGE_CHARS = 16_000;
/** A comment on every open stream this often, so proxies keep it open. */
const HEARTBEAT_MS = 15_000;
/** The largest upload when the gateway names no `media.max_file_mb` (its default, 20 MiB). */
const DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024;
/** How long the page shows "typing…" for one typing event. */
const TYPING_MS = 5_000;

export class WebChannel extends LifecycleChannel implements Channel {
  static configSchema = WebChannelConfig;

  readonly capabilities: ChannelCapabilities;
  /** The page's path, linked from the status page. */
  readonly link: string;
  private readonly config: WebChannelConfig;
  private readonly http: HttpMount;
  private readonly logger: Logger;
  private readonly auth: WebAuth;
  private readonly hub = new Hub();
  private readonly mailbox = new Mailbox();
  private readonly streams = new Set<ServerResponse>();
  private readonly files = new FileShelf();
  private readonly uploads: UploadShelf;
  private assets: Record<Asset, string> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly history: ChannelContext["history"];
  private readonly serverUrl: ChannelContext["serverUrl"];

  constructor(ctx: ChannelContext<WebChannelConfig>) {
    super(ctx.name, "sse");
    this.config = ctx.config;
    this.http = ctx.http;
    this.logger = ctx.logger;
    this.history = ctx.history;
    this.serverUrl = ctx.serverUrl;
    this.link = ctx.config.path;
    this.auth = new WebAuth(ctx.config.token, ctx.config.path);
    this.uploads = new UploadShelf(ctx.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES);
    this.capabilities = {
      maxTextLength: 100_000,
      minEditIntervalMs: ctx.config.edit_interval_ms,
      edits: true,
      buttons: true,
      threads: false,
      markdown: htmlEmitter,
      maxButtons: 10,
      typingIntervalMs: TYPING_MS - 1_000,
      // The page shows the progress view as a panel under the message (public/progress.js).
      progressView: true,
    };
  }

  protected async open(sink: InboundSink): Promise<void> {
    this.assets = await loadAssets(this.name, this.config.path);
    const base = this.config.path;
    const api = `${base}/api`;
    const route = (
      method: string,
      path: string,
      handler: (req: IncomingMessage, res: ServerResponse, p: Record<string, string>) => unknown,
    ) => this.http.route(method, path, handler);
    route("GET", base, (req, res) => this.asset(req, res, "index.html"));
    for (const name of Object.keys(ASSETS) as Asset[]) {
      if (name !== "index.html") route("GET", `${base}/${name}`, (req, res) => this.asset(req, res, name));
    }
    this.mountFavicon();
    route("GET", `${api}/session`, (req, res) => this.getSession(req, res));
    route("POST", `${api}/session`, (req, res) => this.postSession(req, res));
    route("GET", `${api}/conversations/:conv/history`, (req, res, p) => this.getHistory(req, res, p));
    route("GET", `${api}/conversations/:conv/events`, (req, res, p) => this.getEvents(req, res, p));
    route("POST", `${api}/conversations/:conv/messages`, (req, res, p) => this.postMessage(req, res, p, sink));
    route("POST", `${api}/conversations/:conv/actions`, (req, res, p) => this.postAction(req, res, p, sink));
    route("GET", `${api}/files/:file`, (req, res, p) => this.getFile(req, res, p));
    // The upload shelf bounds the body itself, once the caller may use the chat, with a refusal
    // that names media.max_file_mb; a little more here lets that message be the one sent.
    this.http.route("POST", `${api}/conversations/:conv/uploads`, (req, res, p) => this.postUpload(req, res, p), {
      maxBodyBytes: 2 * this.uploads.maxFileBytes,
    });
    this.heartbeat = setInterval(() => {
      for (const res of this.streams) res.write(": ping\n\n");
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
    const server = this.serverUrl?.();
    const url = server ? `${server}${base}` : base;
    const who = this.auth.guarded ? "with its token" : "from this machine";
    this.logger.info({ url }, `web chat: open ${url} (${who})`);
  }

  protected async close(): Promise<void> {
    this.http.unroute();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    for (const res of this.streams) res.end();
    this.streams.clear();
  }

  // --- Channel: what the core calls ---

  /** Shows the message in the open pages; one sent first, or while no page is open, is kept for later ones (mailbox.ts). */
  async send(ref: ConversationRef, content: OutboundContent, options?: SendOptions): Promise<MessageHandle> {
    const id = randomBytes(9).toString("base64url");
    const message = pageMessage(id, content);
    const keep = this.keeps(ref.key, options);
    this.hub.publish(ref.key, "message", { ...message });
    if (keep) this.keep(ref.key, { id, text: message.text, html: message.html, at: message.at });
    return { id, ref };
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    const data: Record<string, unknown> = { id: handle.id, text: content.text, html: toHtml(content.text) };
    if (content.buttons !== undefined) data.buttons = content.buttons;
    // Every edit says what the panel shows now: null takes it away (the run ended without a summary).
    data.progress = pageProgress(content.progress);
    this.hub.publish(handle.ref.key, "edit", data);
    this.mailbox.edit(handle.ref.key, handle.id, content.text, data.html as string);
  }

  /** `{chat: "<client id>/<conversation id>"}`; the web chat has no users to reach. See targets.ts. */
  async resolveTarget(target: SendTarget): Promise<ConversationRef> {
    return resolveWebTarget(this.name, target);
  }

  async download(msg: InboundMessage, attachment: InboundAttachment, maxBytes: number): Promise<Uint8Array> {
    const data = this.uploads.read(attachment, msg.user.id);
    if (data.byteLength > maxBytes) throw new HttpError(413, `${attachment.name} is larger than the media limit`);
    return data;
  }

  async typing(ref: ConversationRef): Promise<void> {
    this.hub.publish(ref.key, "typing", { ms: TYPING_MS }, true);
  }

  async sendFile(ref: ConversationRef, file: OutboundFile, options?: SendOptions): Promise<MessageHandle> {
    const keep = this.keeps(ref.key, options);
    const id = this.files.put(ref.workspace ?? "", file);
    const url = `${this.config.path}/api/files/${id}`;
    const size = file.data.byteLength;
    const at = Date.now();
    this.hub.publish(ref.key, "file", { id, name: file.name, mime: file.mime, kind: file.kind, size, url, at });
    const html = `<a href="${escapeHtml(url)}" download>${escapeHtml(file.name)}</a>`;
    if (keep) this.keep(ref.key, { id, text: `📎 ${file.name}`, html, at });
    return { id, ref };
  }

  // --- the routes ---

  /** `/favicon.ico` at the server's root, for browsers that ask there; the first web channel takes it. */
  private mountFavicon(): void {
    try {
      this.http.route("GET", "/favicon.ico", (req, res) => this.asset(req, res, "favicon.svg"));
    } catch {
      // Another web channel serves it already.
    }
  }

  private asset(req: IncomingMessage, res: ServerResponse, name: Asset): void {
    const refusal = this.auth.guarded ? undefined : this.auth.refusal(req);
    if (refusal) {
      // A person at a browser reads this page, not JSON.
      res.writeHead(refusal.status, { "content-type": "text/plain; charset=utf-8", ...PAGE_HEADERS });
      res.end(refusal.body.error);
      return;
    }
    res.writeHead(200, { "content-type": ASSETS[name], ...PAGE_HEADERS });
    res.end(this.assets?.[name] ?? "");
  }

  private getSession(req: IncomingMessage, res: ServerResponse): void {
    if (this.refused(req, res)) return;
    const id = this.auth.ensureClient(req, res);
    const { maxFileBytes } = this.uploads;
    sendJson(res, 200, { user: { id }, title: this.config.title, channel: this.name, login: false, maxFileBytes });
  }

  private async postSession(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await jsonBody(req);
    if (!this.auth.guarded) {
      // Nothing to sign in to: loopback may use the chat, others may not.
      if (this.refused(req, res)) return;
      res.writeHead(204).end();
      return;
    }
    if (typeof body.token !== "string" || !this.auth.accepts(body.token)) {
      sendJson(res, 401, { error: "That token is not right.", login: true });
      return;
    }
    res.setHeader("set-cookie", this.auth.sessionCookie());
    this.auth.ensureClient(req, res);
    res.writeHead(204).end();
  }

  private async getHistory(req: IncomingMessage, res: ServerResponse, params: Record<string, string>): Promise<void> {
    const caller = this.caller(req, res, params);
    if (!caller) return;
    // Read before the history: events that come meanwhile are replayed, not lost.
    const seq = this.hub.seq(caller.ref.key);
    const history: ConversationHistory = (await this.history?.(caller.ref.key)) ?? { messages: [], waiting: [] };
    const read = history.messages.map((m) => ({
      id: m.id,
      role: m.role,
      text: m.text,
      html: m.role === "assistant" ? toHtml(m.text) : escapeHtml(m.text),
    }));
    const messages = this.mailbox.merge(caller.ref.key, read);
    const waiting = history.waiting.map((w, i) =>
      pageMessage(w.posted?.id ?? `pending-${w.content.questionId ?? "0"}-${i}`, w.content),
    );
    sendJson(res, 200, { messages, pending: waiting[0] ?? null, waiting, seq });
  }

  private getEvents(req: IncomingMessage, res: ServerResponse, params: Record<string, string>): void {
    const caller = this.caller(req, res, params);
    if (!caller) return;
    const url = new URL(req.url ?? "/", "http://localhost");
    const after = sequence(req.headers["last-event-id"]) ?? sequence(url.searchParams.get("after"));
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    res.write("retry: 2000\n\n");
    this.streams.add(res);
    const write = (event: WebEvent) => {
      res.write(`${event.seq > 0 ? `id: ${event.seq}\n` : ""}event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`);
    };
    const unsubscribe = this.hub.subscribe(caller.ref.key, after, write);
    res.on("close", () => {
      unsubscribe();
      this.streams.delete(res);
    });
  }

  private async postMessage(
    req: IncomingMessage,
    res: ServerResponse,
    params: Record<string, string>,
    sink: InboundSink,
  ): Promise<void> {
    const post = await this.post(req, res, params);
    if (!post) return;
    const { caller, body, id } = post;
    if (typeof body.text !== "string") throw new HttpError(400, "text must be a string");
    if (body.text.length > MAX_MESSAGE_CHARS) {
      throw new HttpError(
        413,
        `The message is longer than ${MAX_MESSAGE_CHARS.toLocaleString("en")} characters. Please shorten it.`,
      );
    }
    const text = body.text.trim();
    const attachments = this.uploads.attachments(body.files, caller.client);
    if (text === "" && attachments.length === 0) throw new HttpError(400, "text is empty");
    const msg = webInbound(this.name, caller, id, text);
    if (attachments.length > 0) msg.attachments = attachments;
    if (!(await this.deliver(res, sink, msg))) return;
    const shown = [text, ...attachments.map((a) => `📎 ${a.name}`)].filter(Boolean).join("\n");
    this.hub.publish(caller.ref.key, "user", { id, text: shown, at: msg.sentAt });
  }

  private async postAction(
    req: IncomingMessage,
    res: ServerResponse,
    params: Record<string, string>,
    sink: InboundSink,
  ): Promise<void> {
    const post = await this.post(req, res, params);
    if (!post) return;
    const { caller, body, id } = post;
    const { questionId, buttonId } = body;
    if (typeof questionId !== "string" || !questionId || typeof buttonId !== "string" || !buttonId) {
      throw new HttpError(400, "questionId and buttonId must be non-empty strings");
    }
    const msg = webInbound(this.name, caller, id, "");
    msg.action = { questionId, buttonId, ...(typeof body.messageId === "string" ? { messageId: body.messageId } : {}) };
    await this.deliver(res, sink, msg);
  }

  private async postUpload(req: IncomingMessage, res: ServerResponse, params: Record<string, string>): Promise<void> {
    const caller = this.caller(req, res, params);
    if (!caller) return;
    sendJson(res, 201, await this.uploads.receive(req, caller.client));
  }

  private getFile(req: IncomingMessage, res: ServerResponse, params: Record<string, string>): void {
    if (this.refused(req, res)) return;
    this.files.serve(res, params.file ?? "", this.auth.clientOf(req));
  }

  // --- helpers ---

  /**
   * Whether a message goes into the mailbox: one the outbox sends (it carries an idempotency key)
   * is in no checkpoint, and one sent while no page follows the conversation would be missed.
   */
  private keeps(key: string, options: SendOptions | undefined): boolean {
    return options?.idempotencyKey !== undefined || !this.hub.listening(key);
  }

  /** Keeps a posted message in the mailbox, after the checkpoint's last message of the moment. */
  private keep(key: string, item: MailItem): void {
    this.mailbox.post(key, item);
    this.history?.(key).then(
      (h) => {
        item.after = lastEntryId(h.messages);
      },
      (err: unknown) => this.logger.debug({ err, key }, "web chat: the history for the mailbox could not be read"),
    );
  }

  /** Answers 401/403 when the request may not use the chat. */
  private refused(req: IncomingMessage, res: ServerResponse): Refusal | undefined {
    const refusal = this.auth.refusal(req);
    if (refusal) sendJson(res, refusal.status, refusal.body);
    return refusal;
  }

  /** Who is asking about which conversation; undefined when the request was answered with a refusal. */
  private caller(req: IncomingMessage, res: ServerResponse, params: Record<string, string>): Caller | undefined {
    if (this.refused(req, res)) return undefined;
    const client = this.auth.clientOf(req);
    if (!client) {
      sendJson(res, 400, {
        error: `No chat session: open ${this.config.path} again (GET ${this.config.path}/api/session sets it).`,
      });
      return undefined;
    }
    const conversation = params.conv ?? "";
    if (!CONVERSATION_ID.test(conversation)) {
      sendJson(res, 400, { error: "A conversation id is 8 to 64 letters, digits, '-' or '_'." });
      return undefined;
    }
    return { client, conversation, ref: webRef(this.name, client, conversation) };
  }

  /** A POST into a conversation: who sent it, its JSON body and the client's id for it; undefined when refused. */
  private async post(
    req: IncomingMessage,
    res: ServerResponse,
    params: Record<string, string>,
  ): Promise<{ caller: Caller; body: Record<string, unknown>; id: string } | undefined> {
    const caller = this.caller(req, res, params);
    if (!caller) return undefined;
    const body = await jsonBody(req);
    return { caller, body, id: messageId(body.id) };
  }

  /** Hands a message to the core and answers 202 once it is recorded, else 503: the page offers to send it again. */
  private async deliver(res: ServerResponse, sink: InboundSink, msg: InboundMessage): Promise<boolean> {
    try {
      await sink(msg);
    } catch (err) {
      this.life.noteError(err);
      this.logger.warn({ err, eventId: msg.eventId }, "the core did not take a web chat message");
      sendJson(res, 503, { error: `Not sent: ${errorMessage(err)}. Please send it again.` }, { "retry-after": "5" });
      return false;
    }
    sendJson(res, 202, { accepted: true });
    return true;
  }
}
