/**
 * The Web API half of the fake Slack: `POST /api/<method>` with form or JSON bodies, the real
 * error codes, streams that expire, 429/5xx injection, and a record of what users would see.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { applyChunks, type FakeTask, readChunks, taskLines } from "./chunks.js";
import { SLACK_UPDATE_TEXT_MAX } from "./mrkdwn.js";
import { FakeWorkspace } from "./workspace.js";

export type Json = Record<string, unknown>;

export interface FakeMessage {
  channel: string;
  ts: string;
  threadTs?: string;
  /** Posted by the bot (through the API) or by a user (through the user-side API). */
  byBot: boolean;
  user: string;
  text: string;
  markdown?: string;
  blocks?: Json[];
  streaming: boolean;
  streamStartedAt?: number;
  /** A stream's task cards (`task_update` chunks, chunks.ts) and its plan's title. */
  tasks?: FakeTask[];
  plan?: string;
  /** Every version a user saw: visible text, button labels and task cards, with time. */
  versions: Array<{ text: string; buttons: string[]; tasks?: string[]; at: number }>;
}

/** A `chat.postEphemeral` message: only `user` sees it, and it cannot be edited or found later. */
export interface EphemeralMessage {
  channel: string;
  user: string;
  threadTs?: string;
  text: string;
  at: number;
}

export interface ApiCall {
  method: string;
  args: Json;
  at: number;
  token: string | undefined;
  /** Which listener the call came through: `main`, or a name given to `FakeSlack.listenFor`. */
  client: string;
}

interface Fault {
  method: string;
  kind: "error" | "ratelimit" | "http";
  error?: string;
  retryAfterSec?: number;
  status?: number;
  times: number;
}

export interface WebApiOptions {
  botToken: string;
  appToken: string;
  teamId: string;
  botUserId: string;
  botId: string;
  /** Streams leave the streaming state after this long (Slack: about 5 minutes). */
  streamExpiryMs?: number;
}

type Handler = (args: Json, token: string | undefined) => Json;

/** What a reader sees in mrkdwn: entities decoded, links shown by label. */
export function mrkdwnToPlain(text: string): string {
  return text
    .replace(/<([^>|]+)\|([^>]+)>/g, "$2")
    .replace(/<(https?:[^>]+)>/g, "$1")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

export function visibleText(m: Pick<FakeMessage, "text" | "markdown" | "blocks">): string {
  const sections = (m.blocks ?? []).filter((b) => b.type === "section");
  const main =
    sections.length > 0
      ? sections.map((b) => mrkdwnToPlain(String((b.text as Json)?.text ?? ""))).join("\n")
      : (m.markdown ?? mrkdwnToPlain(m.text));
  // Context blocks show as small lines under the message.
  const context = (m.blocks ?? [])
    .filter((b) => b.type === "context")
    .map((b) => ((b.elements as Json[]) ?? []).map((e) => mrkdwnToPlain(String(e.text ?? ""))).join(" "));
  return [main, ...context].join("\n");
}

export function buttonLabels(m: Pick<FakeMessage, "blocks">): string[] {
  const actions = (m.blocks ?? []).filter((b) => b.type === "actions");
  return actions.flatMap((b) => ((b.elements as Json[]) ?? []).map((e) => String((e.text as Json)?.text ?? "")));
}

/** A Slack `ok:false` answer with this `error` code, thrown by a method handler. */
export class SlackApiError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

export class FakeWebApi {
  readonly calls: ApiCall[] = [];
  readonly messages: FakeMessage[] = [];
  readonly ephemerals: EphemeralMessage[] = [];
  readonly statuses: Array<{ channel: string; threadTs: string; status: string; at: number }> = [];
  /** Members and conversations: where the bot may post (workspace.ts). */
  readonly workspace: FakeWorkspace;
  /** Builds the Socket Mode URL; set by the fake that owns the socket server. */
  socketUrl: () => string = () => "ws://127.0.0.1:1/link";
  private readonly faults: Fault[] = [];
  private tsCounter = 0;
  private readonly handlers: Record<string, Handler>;

  constructor(private readonly options: WebApiOptions) {
    this.workspace = new FakeWorkspace(options.botUserId);
    this.handlers = {
      "conversations.open": (a) => this.workspace.open(a),
      "conversations.info": (a) => this.workspace.info(a),
      "auth.test": (_a, token) => this.authTest(token),
      "apps.connections.open": (_a, token) => this.connectionsOpen(token),
      "chat.postMessage": (a) => this.postMessage(a),
      "chat.update": (a) => this.update(a),
      "chat.postEphemeral": (a) => this.postEphemeral(a),
      "chat.startStream": (a) => this.startStream(a),
      "chat.appendStream": (a) => this.appendStream(a),
      "chat.stopStream": (a) => this.stopStream(a),
      "assistant.threads.setStatus": (a) => this.setStatus(a),
    };
  }

  /** Adds methods served elsewhere (files.ts); they need the bot token like the rest. */
  register(handlers: Record<string, Handler>): void {
    Object.assign(this.handlers, handlers);
  }

  /** The next `times` calls of `method` fail with Slack error `error`. */
  failNext(method: string, error: string, times = 1): void {
    this.faults.push({ method, kind: "error", error, times });
  }

  /** The next `times` calls of `method` get HTTP 429 with `Retry-After: retryAfterSec`. */
  rateLimitNext(method: string, retryAfterSec: number, times = 1): void {
    this.faults.push({ method, kind: "ratelimit", retryAfterSec, times });
  }

  /** The next `times` calls of `method` get an HTTP error status (5xx). */
  httpErrorNext(method: string, status = 500, times = 1): void {
    this.faults.push({ method, kind: "http", status, times });
  }

  nextTs(): string {
    this.tsCounter += 1;
    return (1_700_000_000 + this.tsCounter).toFixed(6);
  }

  /** Records a message a user wrote (so threads and edits can refer to it). */
  addUserMessage(channel: string, user: string, text: string, threadTs?: string): FakeMessage {
    const m: FakeMessage = { channel, ts: this.nextTs(), user, text, byBot: false, streaming: false, versions: [] };
    if (threadTs) m.threadTs = threadTs;
    this.workspace.sawMessage(channel, user);
    this.messages.push(m);
    return m;
  }

  find(channel: string, ts: string): FakeMessage | undefined {
    return this.messages.find((m) => m.channel === channel && m.ts === ts);
  }

  async handle(req: IncomingMessage, res: ServerResponse, method: string, client = "main"): Promise<void> {
    const raw = await readAll(req);
    const args = parseArgs(req.headers["content-type"] ?? "", raw);
    const auth = req.headers.authorization;
    const token = auth?.startsWith("Bearer ") ? auth.slice(7) : typeof args.token === "string" ? args.token : undefined;
    this.calls.push({ method, args, at: Date.now(), token, client });
    const fault = this.takeFault(method);
    if (fault?.kind === "ratelimit") {
      return send(res, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(fault.retryAfterSec ?? 1) });
    }
    if (fault?.kind === "http") return send(res, fault.status ?? 500, { ok: false, error: "internal_error" });
    if (fault?.kind === "error") return send(res, 200, { ok: false, error: fault.error });
    const handler = this.handlers[method];
    if (!handler) return send(res, 200, { ok: false, error: "unknown_method" });
    if (method !== "apps.connections.open" && token !== this.options.botToken) {
      return send(res, 200, { ok: false, error: token?.startsWith("xapp-") ? "not_allowed_token_type" : "invalid_auth" });
    }
    try {
      send(res, 200, { ok: true, ...handler(args, token) });
    } catch (err) {
      if (err instanceof SlackApiError) send(res, 200, { ok: false, error: err.code });
      else send(res, 500, { ok: false, error: "fatal_error" });
    }
  }

  private takeFault(method: string): Fault | undefined {
    const fault = this.faults.find((f) => f.method === method && f.times > 0);
    if (fault) fault.times -= 1;
    return fault;
  }

  private authTest(_token: string | undefined): Json {
    const o = this.options;
    return {
      url: "https://fake.slack.com/",
      team: "Fake Team",
      user: "antler",
      team_id: o.teamId,
      user_id: o.botUserId,
      bot_id: o.botId,
    };
  }

  private connectionsOpen(token: string | undefined): Json {
    if (token === this.options.botToken) throw new SlackApiError("not_allowed_token_type");
    if (token !== this.options.appToken) throw new SlackApiError("invalid_auth");
    return { url: this.socketUrl() };
  }

  private postMessage(a: Json): Json {
    const channel = requireString(a, "channel", "channel_not_found");
    this.workspace.postable(channel);
    const content = this.content(a, 40_000);
    const m: FakeMessage = {
      channel,
      ts: this.nextTs(),
      user: this.options.botUserId,
      byBot: true,
      streaming: false,
      versions: [],
      ...content,
    };
    if (typeof a.thread_ts === "string") m.threadTs = a.thread_ts;
    this.messages.push(m);
    this.snapshot(m);
    return { channel, ts: m.ts, message: { text: m.text, ts: m.ts, bot_id: this.options.botId } };
  }

  private postEphemeral(a: Json): Json {
    const channel = requireString(a, "channel", "channel_not_found");
    const user = requireString(a, "user", "user_not_found");
    const { text } = this.content(a, 40_000);
    const m: EphemeralMessage = { channel, user, text: mrkdwnToPlain(text), at: Date.now() };
    if (typeof a.thread_ts === "string") m.threadTs = a.thread_ts;
    this.ephemerals.push(m);
    // Slack returns a ts for it, but no method accepts that ts afterwards.
    return { message_ts: this.nextTs() };
  }

  private update(a: Json): Json {
    const m = this.botMessage(a, "message_not_found");
    if (!m.byBot) throw new SlackApiError("cant_update_message");
    this.expire(m);
    if (m.streaming) throw new SlackApiError("streaming_state_conflict");
    const content = this.content(a, SLACK_UPDATE_TEXT_MAX);
    m.text = content.text;
    if (content.markdown !== undefined) m.markdown = content.markdown;
    else delete m.markdown;
    // Without a blocks argument Slack keeps the blocks the message had.
    if (a.blocks !== undefined) m.blocks = content.blocks && content.blocks.length > 0 ? content.blocks : undefined;
    else if (content.markdown !== undefined) m.blocks = undefined;
    this.snapshot(m);
    return { channel: m.channel, ts: m.ts, text: m.text };
  }

  private startStream(a: Json): Json {
    const channel = requireString(a, "channel", "channel_not_found");
    const threadTs = requireString(a, "thread_ts", "invalid_arguments");
    if (!channel.startsWith("D")) {
      if (typeof a.recipient_user_id !== "string") throw new SlackApiError("missing_recipient_user_id");
      if (typeof a.recipient_team_id !== "string") throw new SlackApiError("missing_recipient_team_id");
    }
    if (a.task_display_mode !== undefined && a.task_display_mode !== "timeline" && a.task_display_mode !== "plan")
      throw new SlackApiError("invalid_arguments");
    const chunks = readChunks(a);
    const markdown = typeof a.markdown_text === "string" ? a.markdown_text : "";
    this.workspace.postable(channel);
    const m: FakeMessage = {
      channel,
      ts: this.nextTs(),
      threadTs,
      user: this.options.botUserId,
      byBot: true,
      text: "",
      markdown,
      streaming: true,
      streamStartedAt: Date.now(),
      versions: [],
    };
    if (chunks) applyChunks(m, chunks);
    this.messages.push(m);
    this.snapshot(m);
    return { channel, ts: m.ts };
  }

  /** Either `markdown_text` (appended) or `chunks` (chunks.ts), never both. */
  private appendStream(a: Json): Json {
    const m = this.streamingMessage(a);
    const chunks = readChunks(a);
    if (chunks) applyChunks(m, chunks);
    else {
      const delta = requireString(a, "markdown_text", "invalid_arguments");
      if ((m.markdown ?? "").length + delta.length > 12_000) throw new SlackApiError("msg_too_long");
      m.markdown = (m.markdown ?? "") + delta;
    }
    this.snapshot(m);
    return { channel: m.channel, ts: m.ts };
  }

  /** The last text or chunks, and blocks appended under the message (e.g. a context line). */
  private stopStream(a: Json): Json {
    const m = this.streamingMessage(a);
    const chunks = readChunks(a);
    const blocks = a.blocks === undefined ? undefined : (a.blocks as Json[]);
    if (blocks) checkBlocks(blocks);
    if (chunks) applyChunks(m, chunks);
    if (typeof a.markdown_text === "string") m.markdown = (m.markdown ?? "") + a.markdown_text;
    if (blocks && blocks.length > 0) m.blocks = [...(m.blocks ?? []), ...blocks];
    m.streaming = false;
    this.snapshot(m);
    return { channel: m.channel, ts: m.ts, message: { ts: m.ts } };
  }

  private setStatus(a: Json): Json {
    const channel = requireString(a, "channel_id", "channel_not_found");
    const threadTs = requireString(a, "thread_ts", "invalid_arguments");
    this.statuses.push({ channel, threadTs, status: typeof a.status === "string" ? a.status : "", at: Date.now() });
    return {};
  }

  private streamingMessage(a: Json): FakeMessage {
    const m = this.botMessage(a, "message_not_found");
    this.expire(m);
    if (!m.streaming) throw new SlackApiError("message_not_in_streaming_state");
    return m;
  }

  private expire(m: FakeMessage): void {
    const limit = this.options.streamExpiryMs ?? 300_000;
    if (m.streaming && m.streamStartedAt !== undefined && Date.now() - m.streamStartedAt > limit) m.streaming = false;
  }

  private botMessage(a: Json, missing: string): FakeMessage {
    const channel = requireString(a, "channel", "channel_not_found");
    const ts = requireString(a, "ts", missing);
    const m = this.find(channel, ts);
    if (!m) throw new SlackApiError(missing);
    return m;
  }

  /** Checks text/blocks/markdown_text the way Slack does. */
  private content(a: Json, textLimit: number): { text: string; markdown?: string; blocks?: Json[] } {
    const text = typeof a.text === "string" ? a.text : "";
    const markdown = typeof a.markdown_text === "string" ? a.markdown_text : undefined;
    const blocks = a.blocks === undefined ? undefined : (a.blocks as Json[]);
    if (markdown !== undefined && (text || (blocks && blocks.length > 0))) throw new SlackApiError("markdown_text_conflict");
    if (markdown === undefined && !text && !(blocks && blocks.length > 0)) throw new SlackApiError("no_text");
    if (text.length > textLimit || (markdown?.length ?? 0) > 12_000) throw new SlackApiError("msg_too_long");
    if (blocks) checkBlocks(blocks);
    return { text, ...(markdown !== undefined ? { markdown } : {}), ...(blocks && blocks.length > 0 ? { blocks } : {}) };
  }

  private snapshot(m: FakeMessage): void {
    const text = visibleText(m);
    const buttons = buttonLabels(m);
    const tasks = m.tasks ? taskLines(m.tasks) : undefined;
    const last = m.versions[m.versions.length - 1];
    const same = (x: string[] | undefined, y: string[] | undefined) => (x ?? []).join("\n") === (y ?? []).join("\n");
    if (last && last.text === text && same(last.buttons, buttons) && same(last.tasks, tasks)) return;
    m.versions.push({ text, buttons, ...(tasks ? { tasks } : {}), at: Date.now() });
  }
}

function checkBlocks(blocks: Json[]): void {
  if (!Array.isArray(blocks) || blocks.length > 50) throw new SlackApiError("invalid_blocks");
  for (const b of blocks) {
    if (b.type === "context") checkContext(b);
    if (b.type === "section" && String((b.text as Json)?.text ?? "").length > 3000) throw new SlackApiError("invalid_blocks");
    if (b.type === "actions") {
      const elements = b.elements as Json[];
      if (!Array.isArray(elements) || elements.length === 0 || elements.length > 25) throw new SlackApiError("invalid_blocks");
      const ids = new Set(elements.map((e) => e.action_id));
      if (ids.size !== elements.length) throw new SlackApiError("invalid_blocks");
      for (const e of elements) if (String((e.text as Json)?.text ?? "").length > 75) throw new SlackApiError("invalid_blocks");
    }
  }
}

/** A context block: 1 to 10 elements, text ones (mrkdwn or plain_text) with 1 to 3,000 characters. */
function checkContext(b: Json): void {
  const elements = b.elements as Json[];
  if (!Array.isArray(elements) || elements.length === 0 || elements.length > 10) throw new SlackApiError("invalid_blocks");
  for (const e of elements) {
    if (e.type === "image") continue;
    const text = e.text;
    if ((e.type !== "mrkdwn" && e.type !== "plain_text") || typeof text !== "string" || text === "" || text.length > 3000)
      throw new SlackApiError("invalid_blocks");
  }
}

function requireString(a: Json, key: string, error: string): string {
  const v = a[key];
  if (typeof v !== "string" || v === "") throw new SlackApiError(error);
  return v;
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Form bodies carry nested values (blocks) as JSON strings, like the real client sends them. */
function parseArgs(contentType: string, raw: string): Json {
  if (contentType.startsWith("application/json")) return raw ? (JSON.parse(raw) as Json) : {};
  const out: Json = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    out[k] = (k === "blocks" || k === "attachments" || k === "chunks" || k === "files") && v.startsWith("[") ? JSON.parse(v) : v;
  }
  return out;
}

function send(res: ServerResponse, status: number, body: Json, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}
