/**
 * A fake Telegram Bot API on 127.0.0.1 for tests (see PLATFORMS.md "Telegram"). Telegraf talks
 * to it through `telegram.apiRoot`; tests act as users through the methods below and read
 * what the chat shows. Faults: injected errors per method (429 with retry_after, 5xx), and a
 * record of every call made while a 429's retry_after had not yet passed; file URLs that never
 * answer or stall mid-body (`downloadStalls`, ../download-stalls.ts). Reach: a private chat exists
 * only once its user wrote to the bot (else sends get 403 and getChat "chat not found"), as in Telegram. Several bot processes:
 * each may get a listener of its own (`listenFor`), so every call names its client; only one
 * getUpdates may be open at a time (the adapter's transport.ts), and each conflict is recorded.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { closeServer } from "../../../src/server/http.js";
import { seeded } from "../../helpers/seeded.js";
import { DownloadStalls } from "../download-stalls.js";
import { ApiError, BotApi, type CallbackRecord } from "./api.js";
import { type ChatKind, type ChatMessage, ChatStore, type FakeChat, type FakeUser, userEntities } from "./chats.js";
import { FileStore, type MediaKind, type MessageMedia, readMultipart, UploadTooLarge } from "./files.js";
import { LongPolls, type PollConflict } from "./polling.js";
import { type Update, UpdateQueue } from "./updates.js";

export type { ChatMessage, FakeChat, FakeUser } from "./chats.js";
export type { MediaKind, MessageMedia, StoredFile } from "./files.js";
export type { PollConflict } from "./polling.js";
export { CONFLICT_DESCRIPTION } from "./polling.js";
export type { Update } from "./updates.js";

export interface Fault {
  /** Bot API method, or "*" for all but getUpdates. */
  method: string;
  code: number;
  description?: string;
  /** Seconds, for 429. */
  retryAfter?: number;
  /** Fire this many times (default: unlimited when `probability` is set, else 1). */
  times?: number;
  /** Fire on this share of matching calls, decided by a seeded generator. */
  probability?: number;
  seed?: number;
  /** Answer with this non-JSON body instead (e.g. a proxy's HTML error page). */
  rawBody?: string;
}

/** A reply that is not the Bot API's JSON, as a proxy in front of it might send. */
class RawReply extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(body);
  }
}

export interface CallRecord {
  method: string;
  at: number;
  params: Record<string, unknown>;
  status: number;
  description?: string;
  /** Which listener the call came through: `main`, or a name given to `listenFor`. */
  client: string;
  /** getUpdates: the update_ids it handed out. */
  handed?: number[];
}

export interface FakeTelegramOptions {
  token?: string;
  bot?: { id: number; username: string; first_name?: string };
  /** Pause between webhook redeliveries (real Telegram backs off up to a minute or two). */
  webhookRetryMs?: number;
}

const CHAT_METHODS = new Set(["sendMessage", "editMessageText", "sendChatAction", "deleteMessage"]);

interface ActiveFault extends Fault {
  left: number;
  rng: () => number;
}

export class FakeTelegram {
  readonly token: string;
  readonly chats = new ChatStore();
  readonly files = new FileStore();
  /** Faults of the file URLs: a download that never answers, or whose body stalls after the headers. */
  readonly downloadStalls = new DownloadStalls();
  /** Paths asked for at `/file/bot<token>/…`, whatever the answer. */
  readonly fileDownloads: Array<{ path: string; status: number }> = [];
  readonly updates: UpdateQueue;
  readonly api: BotApi;
  readonly calls: CallRecord[] = [];
  /** Calls to a chat made before a 429's retry_after had passed. */
  readonly earlyCalls: CallRecord[] = [];
  /**
   * When above 0, an edit of a message sooner than this after its text last changed is refused
   * with 429 (a strict flood limit) and recorded in `tooFastEdits`.
   */
  editGapMs = 0;
  readonly tooFastEdits: CallRecord[] = [];
  private readonly faults: ActiveFault[] = [];
  private readonly floodUntil = new Map<string, number>();
  private readonly polls: LongPolls;
  private server: Server | undefined;
  private readonly clientServers = new Map<string, Server>();
  private nextQueryId = 1;

  private constructor(options: FakeTelegramOptions) {
    this.token = options.token ?? "123456:TEST-token_abcdef";
    const bot = { first_name: "Antler", ...(options.bot ?? { id: 123456, username: "antler_test_bot" }) };
    this.updates = new UpdateQueue(
      (call) => this.runWebhookReply(call),
      () => options.webhookRetryMs ?? 150,
    );
    this.api = new BotApi(bot, this.chats, this.updates, this.files);
    this.polls = new LongPolls(this.updates);
  }

  static async start(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
    const fake = new FakeTelegram(options);
    fake.server = await fake.listen("main");
    return fake;
  }

  get apiRoot(): string {
    const addr = this.server?.address() as AddressInfo;
    return `http://127.0.0.1:${addr.port}`;
  }

  /**
   * An API root of its own for one bot process (e.g. one gateway replica): the same bot, but
   * the calls that come through it are recorded with `client` set to `name`.
   */
  async listenFor(name: string): Promise<string> {
    let server = this.clientServers.get(name);
    if (!server) {
      server = await this.listen(name);
      this.clientServers.set(name, server);
    }
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** getUpdates polls ended with 409 because a newer one came (a healthy single poller has none). */
  get conflicts(): PollConflict[] {
    return this.polls.conflicts;
  }

  private async listen(client: string): Promise<Server> {
    const server = createServer((req, res) => void this.handle(req, res, client));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return server;
  }

  get bot() {
    return this.api.bot;
  }

  async close(): Promise<void> {
    this.updates.close();
    const servers = [this.server, ...this.clientServers.values()];
    this.server = undefined;
    this.clientServers.clear();
    for (const server of servers) if (server) await closeServer(server);
  }

  // ---- the user's side ----

  /** A user writes in a chat; mentions and commands get entities as a client would add them. */
  say(chat: ChatTarget, from: FakeUser, text: string, opts: SayOptions = {}): Update {
    return this.post(chat, from, text, opts);
  }

  /** A user sends a photo, with the caption as its text (Telegram keeps no name for photos). */
  sendPhoto(chat: ChatTarget, from: FakeUser, data: Uint8Array, opts: MediaOptions = {}): Update {
    return this.sendMedia(chat, from, "photo", data, opts);
  }

  /** A user sends a file as a document; its name and the MIME type (from the extension, unless given) are kept. */
  sendDocument(chat: ChatTarget, from: FakeUser, data: Uint8Array, name: string, opts: MediaOptions = {}): Update {
    return this.sendMedia(chat, from, "document", data, { ...opts, name });
  }

  /** A user records a voice note (OGG/Opus, no name). */
  sendVoice(chat: ChatTarget, from: FakeUser, data: Uint8Array, opts: MediaOptions = {}): Update {
    return this.sendMedia(chat, from, "voice", data, opts);
  }

  /** A user sends a music or audio file, which keeps its name. */
  sendAudio(chat: ChatTarget, from: FakeUser, data: Uint8Array, name: string, opts: MediaOptions = {}): Update {
    return this.sendMedia(chat, from, "audio", data, { ...opts, name });
  }

  private sendMedia(chat: ChatTarget, from: FakeUser, kind: MediaKind, data: Uint8Array, opts: MediaOptions & { name?: string }) {
    const { caption, name, mime, duration, ...say } = opts;
    const media = this.files.media(kind, data, {
      ...(name !== undefined ? { name } : {}),
      ...(mime !== undefined ? { mime } : {}),
      ...(duration !== undefined ? { duration } : {}),
    });
    return this.post(chat, from, caption ?? "", say, media);
  }

  private post(chat: ChatTarget, from: FakeUser, text: string, opts: SayOptions, media?: MessageMedia): Update {
    const c = this.chats.ensure(chat.id, chat.type, {
      title: chat.type === "private" ? undefined : `Chat ${chat.id}`,
      ...(chat.isForum ? { isForum: true } : {}),
    });
    const now = Date.now();
    const entities = opts.entities ?? userEntities(text);
    const m = this.chats.add(
      c,
      {
        from,
        fromBot: from.is_bot === true,
        text,
        entities,
        keyboard: [],
        date: now,
        ...(opts.threadId !== undefined ? { threadId: opts.threadId } : {}),
        ...(opts.replyTo !== undefined ? { replyTo: opts.replyTo } : {}),
        ...(media ? { media } : {}),
      },
      now,
    );
    return this.updates.push({ message: ChatStore.toApi(c, m) });
  }

  /** A user sends a sticker in a private chat: a message with no text at all. */
  sticker(from: FakeUser): Update {
    const update = this.dm(from, "");
    const message = update.message as Record<string, unknown>;
    delete message.text;
    delete message.entities;
    message.sticker = { file_id: "sticker-1", emoji: "👍", width: 512, height: 512, is_animated: false };
    return update;
  }

  /** The bot is added to a group (or the group exists with the bot in it) before anyone writes there. */
  addChat(chat: ChatTarget): FakeChat {
    return this.chats.ensure(chat.id, chat.type, {
      title: chat.type === "private" ? undefined : `Chat ${chat.id}`,
      ...(chat.isForum ? { isForum: true } : {}),
    });
  }

  /** A Telegram user the fake knows (e.g. seen in a group) who never started the bot: sends to them get 403. */
  addUser(user: FakeUser): void {
    this.chats.users.set(user.id, user);
  }

  /** The user blocks the bot: their private chat stays, sends to it get 403 "bot was blocked by the user". */
  blockBot(userId: number): void {
    this.chats.blocked.add(userId);
  }

  /** A forum topic is created (by a person) before anyone wrote in it. */
  openTopic(chatId: number, threadId: number): void {
    const chat = this.chats.get(chatId);
    if (!chat?.isForum) throw new Error(`chat ${chatId} is not a forum the fake knows`);
    chat.topics.add(threadId);
  }

  /** A private chat: its id is the user's id, as in Telegram. */
  dm(from: FakeUser, text: string): Update {
    return this.say({ id: from.id, type: "private" }, from, text);
  }

  /** Clicks the button labelled `label` on the newest bot message in `chatId` that shows it. */
  click(chatId: number, from: FakeUser, label: string): Update {
    const chat = this.chats.get(chatId);
    const message = [...(chat?.messages ?? [])]
      .reverse()
      .find((m) => m.fromBot && !m.deleted && m.keyboard.flat().some((b) => b.text === label));
    const button = message?.keyboard.flat().find((b) => b.text === label);
    if (!chat || !message || !button) throw new Error(`no bot message in chat ${chatId} shows a button "${label}"`);
    const id = `cq${this.nextQueryId++}`;
    this.api.callbacks.set(id, { id, at: Date.now(), from });
    return this.updates.push({
      callback_query: {
        id,
        from,
        message: ChatStore.toApi(chat, message),
        chat_instance: `ci${chat.id}`,
        data: button.callback_data,
      },
    });
  }

  /** Telegram delivers the update again with the same update_id. */
  redeliver(update: Update): void {
    this.updates.redeliver(update);
  }

  callback(id: string): CallbackRecord | undefined {
    return this.api.callbacks.get(id);
  }

  /** Texts of click answers (toasts and alerts) shown to user `userId`, oldest first; no one else sees them. */
  clickAnswersSeenBy(userId: number): string[] {
    return [...this.api.callbacks.values()]
      .filter((c) => c.from?.id === userId && c.answeredAt !== undefined && c.text !== undefined)
      .map((c) => c.text as string);
  }

  /** Files the bot posted in a chat (optionally one topic), oldest first, with their bytes as a user downloads them. */
  botFiles(chatId: number, threadId?: number): BotPostedFile[] {
    return this.botMessages(chatId, threadId).flatMap((m) => {
      if (!m.media) return [];
      const { file } = m.media;
      const name = file.name ?? file.uploadedAs ?? file.file_path.slice(file.file_path.lastIndexOf("/") + 1);
      return [{ kind: m.media.kind, name, data: file.data, message: m }];
    });
  }

  /** Bot messages in a chat (optionally one forum topic), oldest first. */
  botMessages(chatId: number, threadId?: number): ChatMessage[] {
    return (this.chats.get(chatId)?.messages ?? []).filter(
      (m) => m.fromBot && m.from.id === this.bot.id && !m.deleted && (threadId === undefined || m.threadId === threadId),
    );
  }

  chat(chatId: number): FakeChat | undefined {
    return this.chats.get(chatId);
  }

  /** POSTs an update straight to the registered webhook, with any secret (or none); returns the status. */
  async postToWebhook(update: Update, secret: string | undefined): Promise<number> {
    const url = this.updates.webhook?.url;
    if (!url) throw new Error("no webhook is set");
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (secret !== undefined) headers["x-telegram-bot-api-secret-token"] = secret;
    const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(update) });
    await res.text();
    return res.status;
  }

  // ---- faults ----

  inject(fault: Fault): void {
    const rng = seeded(fault.seed ?? 1);
    const left = fault.times ?? (fault.probability !== undefined ? Number.POSITIVE_INFINITY : 1);
    this.faults.push({ ...fault, left, rng });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  private faultFor(method: string): ActiveFault | undefined {
    for (const f of this.faults) {
      if (f.left <= 0 || (f.method !== method && !(f.method === "*" && method !== "getUpdates"))) continue;
      if (f.probability !== undefined && f.rng() >= f.probability) continue;
      f.left--;
      return f;
    }
    return undefined;
  }

  // ---- HTTP ----

  private async handle(req: IncomingMessage, res: ServerResponse, client: string): Promise<void> {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (req.method === "GET" && path.startsWith("/file/")) return this.serveFile(path, res);
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(path);
    let params: Record<string, unknown>;
    try {
      params = await readParams(req);
    } catch (err) {
      if (!(err instanceof UploadTooLarge)) throw err;
      return reply(res, { ok: false, error_code: 413, description: "Request Entity Too Large" }, 413);
    }
    if (!match) return reply(res, { ok: false, error_code: 404, description: "Not Found" }, 404);
    const [, token, method] = match as unknown as [string, string, string];
    if (token !== this.token) return reply(res, { ok: false, error_code: 401, description: "Unauthorized" }, 401);
    const record: CallRecord = { method, at: Date.now(), params, status: 200, client };
    this.calls.push(record);
    try {
      const result = method === "getUpdates" ? await this.getUpdates(params, req, client) : this.dispatch(method, params, record);
      if (method === "getUpdates") record.handed = (result as Update[]).map((u) => u.update_id);
      reply(res, { ok: true, result }, 200);
    } catch (err) {
      if (err instanceof RawReply) {
        record.status = err.status;
        res.writeHead(err.status, { "content-type": "text/html" });
        res.end(err.body);
        return;
      }
      const e = err instanceof ApiError ? err : new ApiError(500, "Internal Server Error");
      record.status = e.code;
      record.description = e.description;
      const body = {
        ok: false,
        error_code: e.code,
        description: e.description,
        ...(e.parameters ? { parameters: e.parameters } : {}),
      };
      const headers = e.parameters?.retry_after !== undefined ? { "retry-after": String(e.parameters.retry_after) } : undefined;
      reply(res, body, e.code, headers);
    }
  }

  /** `GET /file/bot<token>/<file_path>`: the bytes, with the token checked like any call. */
  private serveFile(path: string, res: ServerResponse): void {
    const match = /^\/file\/bot([^/]+)\/(.+)$/.exec(path);
    const record = { path: match?.[2] ?? path, status: 200 };
    this.fileDownloads.push(record);
    const file = match ? this.files.atPath(decodeURIComponent(match[2] as string)) : undefined;
    if (match?.[1] !== this.token) record.status = 401;
    else if (!file) record.status = 404;
    if (record.status !== 200 || !file) {
      const description = record.status === 401 ? "Unauthorized" : "Not Found";
      reply(res, { ok: false, error_code: record.status, description }, record.status);
      return;
    }
    if (this.downloadStalls.take(res, file.data, { "content-type": "application/octet-stream" })) return;
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(file.data.byteLength) });
    res.end(Buffer.from(file.data));
  }

  private dispatch(method: string, params: Record<string, unknown>, record: CallRecord): unknown {
    const chatKey = CHAT_METHODS.has(method) ? String(params.chat_id) : undefined;
    const until = chatKey ? this.floodUntil.get(chatKey) : undefined;
    if (chatKey && until !== undefined && record.at < until) {
      this.earlyCalls.push(record);
      const retryAfter = Math.max(1, Math.ceil((until - record.at) / 1000));
      throw new ApiError(429, `Too Many Requests: retry after ${retryAfter}`, { retry_after: retryAfter });
    }
    if (method === "editMessageText" && this.editGapMs > 0) {
      const last = this.chats.find(String(params.chat_id), String(params.message_id))?.versions.at(-1)?.at;
      if (last !== undefined && record.at - last < this.editGapMs) {
        this.tooFastEdits.push(record);
        throw new ApiError(429, "Too Many Requests: retry after 1", { retry_after: 1 });
      }
    }
    const fault = this.faultFor(method);
    if (fault) {
      if (fault.rawBody !== undefined) throw new RawReply(fault.code, fault.rawBody);
      if (fault.code === 429) {
        const retryAfter = fault.retryAfter ?? 1;
        if (chatKey) this.floodUntil.set(chatKey, record.at + retryAfter * 1000);
        throw new ApiError(429, `Too Many Requests: retry after ${retryAfter}`, { retry_after: retryAfter });
      }
      throw new ApiError(fault.code, fault.description ?? (fault.code >= 500 ? "Internal Server Error" : "Bad Request"));
    }
    return this.api.call(method, params);
  }

  private async getUpdates(params: Record<string, unknown>, req: IncomingMessage, client: string): Promise<Update[]> {
    if (this.updates.webhook) {
      throw new ApiError(
        409,
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      );
    }
    const fault = this.faultFor("getUpdates");
    if (fault)
      throw new ApiError(
        fault.code,
        fault.description ?? "Internal Server Error",
        fault.code === 429 ? { retry_after: fault.retryAfter ?? 1 } : undefined,
      );
    return this.polls.serve(params, req, client, () => !this.server);
  }

  private async runWebhookReply(call: Record<string, unknown>): Promise<void> {
    const { method, ...params } = call;
    const record: CallRecord = { method: String(method), at: Date.now(), params, status: 200, client: "webhook-reply" };
    this.calls.push(record);
    try {
      this.dispatch(String(method), params, record);
    } catch (err) {
      record.status = err instanceof ApiError ? err.code : 500;
    }
  }
}

export type ChatTarget = { id: number; type: ChatKind; isForum?: boolean };

export interface MediaOptions extends SayOptions {
  /** The text sent with the file. */
  caption?: string;
  /** MIME type, when the client states one (documents and audio); else from the name. */
  mime?: string;
  /** Seconds, for voice notes and audio. */
  duration?: number;
}

/** A file the bot posted, as the chat shows it. */
export interface BotPostedFile {
  kind: MediaKind;
  name: string;
  data: Uint8Array;
  message: ChatMessage;
}

export interface SayOptions {
  threadId?: number;
  replyTo?: number;
  entities?: Array<{ type: string; offset: number; length: number; user?: FakeUser }>;
}

async function readParams(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (String(req.headers["content-type"]).startsWith("multipart/form-data")) return readMultipart(req);
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return Object.fromEntries(new URLSearchParams(text));
  }
}

function reply(res: ServerResponse, body: unknown, status: number, headers: Record<string, string> = {}): void {
  if (res.writableEnded) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}
