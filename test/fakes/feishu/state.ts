/**
 * The fake Feishu's memory: app credentials, tokens, messages, card entities, injected faults,
 * rate-limit windows and a log of every API call.
 */
import { randomBytes } from "node:crypto";
import { DownloadStalls } from "../download-stalls.js";
import type { FakeCard, FakeMessage } from "./model.js";

export type FaultOp =
  | "token"
  | "bot_info"
  | "ws_endpoint"
  | "send"
  | "reply"
  | "patch"
  | "update"
  | "card_create"
  | "card_content"
  | "card_settings"
  | "card_update"
  | "element_create"
  | "element_update"
  | "element_delete"
  | "reaction"
  | "image_upload"
  | "file_upload"
  | "resource"
  | "chat_get";

export interface Fault {
  /** HTTP status; 200 with a non-zero code is a business error. */
  status: number;
  code: number;
  msg?: string;
  /** Seconds, sent as `x-ogw-ratelimit-reset`. */
  retryAfterSec?: number;
  /** Only calls sending this `msg_type` fail (e.g. refuse cards but not text). */
  msgType?: string;
}

export interface ApiCall {
  op: FaultOp | "reaction_delete" | "unknown";
  at: number;
  status: number;
  code: number;
  path: string;
  body?: unknown;
}

export interface WorldOptions {
  appId: string;
  appSecret: string;
  botOpenId: string;
  botName: string;
  tenantKey: string;
  encryptKey?: string;
  verificationToken?: string;
}

/** Limits the fake enforces, per PLATFORMS.md. */
export const LIMITS = {
  cardOpsPerSecond: 10,
  patchPerSecond: 5,
  sendPerSecondPerChat: 5,
  textEdits: 20,
  cardBytes: 30 * 1024,
  elementChars: 100_000,
  /** `POST /im/v1/images`. */
  imageBytes: 10 * 1024 * 1024,
  /** `POST /im/v1/files`. */
  fileBytes: 30 * 1024 * 1024,
  /** `GET /im/v1/messages/:id/resources/:key`. */
  resourceBytes: 100 * 1024 * 1024,
} as const;

/** An uploaded image or file, by its key; users' files are stored the same way when they send them. */
export interface FakeFile {
  key: string;
  kind: "image" | "file";
  data: Buffer;
  /** `file_name` of an uploaded file; images have none. */
  name?: string;
  /** `file_type` of an uploaded file. */
  fileType?: string;
  /** What the resource API answers as Content-Type (users' files); else read from the bytes. */
  mime?: string;
  by: "user" | "bot";
}

/** A chat as the platform knows it. */
export interface FakeChat {
  id: string;
  type: "p2p" | "group";
  /** The bot is a member; a lookup of a chat it is not in shows only the name and status. */
  botMember: boolean;
  status: "normal" | "dissolved";
}

/** A person the app may see, by open_id. */
export interface FakePerson {
  /** False: outside the bot's availability, so Feishu refuses to message them (230013). */
  available: boolean;
  /** Their p2p chat with the bot, once one of them wrote. */
  p2pChat?: string;
}

/** Feishu posts one message per `uuid` within an hour, and answers repeats with the first. */
export const UUID_WINDOW_MS = 3600_000;

export class FeishuWorld {
  readonly messages: FakeMessage[] = [];
  readonly chats = new Map<string, FakeChat>();
  readonly people = new Map<string, FakePerson>();
  /** Message posted per `uuid`, with when. */
  readonly uuids = new Map<string, { messageId: string; at: number }>();
  readonly cards = new Map<string, FakeCard>();
  readonly calls: ApiCall[] = [];
  readonly tokens = new Map<string, number>();
  readonly files = new Map<string, FakeFile>();
  /** Faults of the resource downloads: one that never answers, or whose body stalls after the headers. */
  readonly downloadStalls = new DownloadStalls();
  /** Serve resource downloads without Content-Length (chunked), as a proxy might. */
  chunkedDownloads = false;
  private readonly faults: Array<{ op: FaultOp; fault: Fault; remaining: number }> = [];
  private readonly windows = new Map<string, number[]>();
  private counter = 0;

  constructor(readonly options: WorldOptions) {}

  id(prefix: string): string {
    this.counter += 1;
    return `${prefix}${this.counter.toString(16).padStart(6, "0")}${randomBytes(4).toString("hex")}`;
  }

  /** The next `times` calls of `op` fail with `fault`. */
  failNext(op: FaultOp, fault: Fault, times = 1): void {
    this.faults.push({ op, fault, remaining: times });
  }

  takeFault(op: FaultOp, msgType?: unknown): Fault | undefined {
    const entry = this.faults.find(
      (f) => f.op === op && f.remaining > 0 && (f.fault.msgType === undefined || f.fault.msgType === msgType),
    );
    if (!entry) return undefined;
    entry.remaining -= 1;
    return entry.fault;
  }

  issueToken(): { token: string; expire: number } {
    const token = `t-${randomBytes(12).toString("hex")}`;
    this.tokens.set(token, Date.now() + 7200_000);
    return { token, expire: 7200 };
  }

  validToken(authorization: string | undefined): boolean {
    const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
    const expires = token ? this.tokens.get(token) : undefined;
    return expires !== undefined && expires > Date.now();
  }

  /** Counts one operation against `key`; true when it goes over `perSecond`. */
  overLimit(key: string, perSecond: number, now = Date.now()): boolean {
    const recent = (this.windows.get(key) ?? []).filter((t) => now - t < 1000);
    const over = recent.length >= perSecond;
    if (!over) recent.push(now);
    this.windows.set(key, recent);
    return over;
  }

  /** Registers a chat (a user wrote there, or a test set it up); the bot is a member unless said. */
  addChat(id: string, type: FakeChat["type"], botMember = true): FakeChat {
    const chat = this.chats.get(id) ?? { id, type, botMember, status: "normal" as const };
    this.chats.set(id, chat);
    return chat;
  }

  /** The p2p chat with a person, opened on first use as Feishu does when the bot messages them. */
  p2pChatOf(openId: string): string {
    const person = this.people.get(openId) ?? { available: true };
    this.people.set(openId, person);
    person.p2pChat ??= this.addChat(this.id("oc_p2p"), "p2p").id;
    return person.p2pChat;
  }

  message(id: string): FakeMessage | undefined {
    return this.messages.find((m) => m.id === id);
  }

  /** Calls that the platform refused with a rate limit. */
  rateLimited(): ApiCall[] {
    return this.calls.filter((c) => c.status === 429);
  }
}
