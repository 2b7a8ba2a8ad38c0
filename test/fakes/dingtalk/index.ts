/**
 * A fake DingTalk on 127.0.0.1 for the dingtalk-stream SDK and Antler's OpenAPI client: the
 * stream gateway (connections/open + WebSocket with acked CALLBACK frames), the OpenAPI
 * (token, AI cards, robot sends, file downloads), the older host's media upload, sessionWebhooks,
 * and HTTP-mode robot callbacks with signatures. Tests act as users (DMs, group @mentions, files,
 * card clicks), inject faults (file URLs that never answer or stall mid-body: `files.stalls`),
 * and read what users saw.
 */

import { createHmac, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { closeServer } from "../../../src/server/http.js";
import { FakeChat, type FakeFile, type FakeMessage } from "./chat.js";
import { FakeFiles, fileMessage, type UserFileSpec } from "./files.js";
import { type FakeApi, type FaultKind, OpenApi, type Reply, type Session, type TemplateSpec } from "./openapi.js";
import { StreamGateway } from "./stream-gateway.js";

export type { FakeFile, FakeMessage } from "./chat.js";
export type { UserFileSpec } from "./files.js";
export type { FakeApi, FaultKind, TemplateSpec } from "./openapi.js";

export const TOPIC_ROBOT = "/v1.0/im/bot/messages/get";
export const TOPIC_CARD = "/v1.0/card/instances/callback";

export interface FakeUser {
  staffId: string;
  senderId: string;
  nick: string;
}

export interface FakeDingTalkOptions {
  clientId?: string;
  clientSecret?: string;
  robotCode?: string;
  templates?: Record<string, TemplateSpec>;
  /** Resend delay for unacked CALLBACK frames (DingTalk: about 60 s). */
  resendAfterMs?: number;
  tokenTtlSec?: number;
  /** Lifetime of a message's sessionWebhook (DingTalk: about 90 min). */
  webhookTtlMs?: number;
  streamingQps?: number;
  webhookPerMinute?: number;
}

export interface SayOptions {
  /** Group conversationId; a DM with the user when absent. */
  group?: string;
  user?: FakeUser;
  /** Groups: whether the robot is @mentioned (DingTalk delivers only mentions). Default true. */
  mention?: boolean;
  /** HTTP mode: sign with this secret instead of the app secret. */
  signWith?: string;
  /** HTTP mode: timestamp to sign (ms). */
  timestamp?: number;
}

export interface Delivery {
  msgId: string;
  /** Stream mode: the frame's messageId. */
  messageId?: string;
  /** HTTP mode: the status Antler answered. */
  status?: number;
}

interface Fault {
  api: FakeApi;
  kind: FaultKind;
  remaining: number;
}

export const ALICE: FakeUser = { staffId: "staff-alice", senderId: "$:LWCP_v1:$alice", nick: "Alice" };
export const BOB: FakeUser = { staffId: "staff-bob", senderId: "$:LWCP_v1:$bob", nick: "Bob" };

export class FakeDingTalk {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly robotCode: string;
  readonly corpId = "ding-corp-1";
  readonly botUserId = "$:LWCP_v1:$robot";
  readonly chat = new FakeChat();
  readonly gateway: StreamGateway;
  readonly api: OpenApi;
  readonly files: FakeFiles;
  readonly calls: Array<{ api: string; body: unknown; status: number; at: number }> = [];
  /** HTTP mode: where robot messages are POSTed (Antler's callback route). */
  callbackUrl: string | undefined;
  private readonly sessions = new Map<string, Session>();
  private readonly groups = new Set<string>(["cid-group-1"]);
  /** Staff ids in the organisation who see the app; others are refused by the DM send (invalidStaffIdList). */
  private readonly staff = new Set<string>([ALICE.staffId, BOB.staffId]);
  private readonly faults: Fault[] = [];
  private readonly server: Server;
  private webhookTtlMs: number;
  private last: { data: Record<string, unknown>; messageId?: string; opts: SayOptions } | undefined;
  private seq = 0;
  url = "";

  private constructor(opts: FakeDingTalkOptions) {
    this.clientId = opts.clientId ?? "ding-app-key";
    this.clientSecret = opts.clientSecret ?? "ding-app-secret-0123456789";
    this.robotCode = opts.robotCode ?? this.clientId;
    this.webhookTtlMs = opts.webhookTtlMs ?? 90 * 60_000;
    this.gateway = new StreamGateway(this.clientId, opts.resendAfterMs ?? 60_000);
    this.files = new FakeFiles(this.chat, this.robotCode, () => this.url);
    this.api = new OpenApi({
      clientId: this.clientId,
      clientSecret: this.clientSecret,
      robotCode: this.robotCode,
      tokenTtlSec: opts.tokenTtlSec ?? 7200,
      templates: opts.templates ?? {},
      chat: this.chat,
      sessions: this.sessions,
      dmOf: (staffId) => (this.staff.has(staffId) ? `cid-dm-${staffId}` : undefined),
      isGroup: (cid) => this.groups.has(cid),
      streamingQps: opts.streamingQps ?? 20,
      webhookPerMinute: opts.webhookPerMinute ?? 20,
      postFile: (cid, msgKey, param) => this.files.post(cid, msgKey, param),
    });
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on("upgrade", (req, socket, head) => this.gateway.upgrade(req, socket, head));
  }

  static async start(opts: FakeDingTalkOptions = {}): Promise<FakeDingTalk> {
    const fake = new FakeDingTalk(opts);
    await new Promise<void>((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  get gatewayUrl(): string {
    return `${this.url}/v1.0/gateway/connections/open`;
  }

  /** The keys of a `dingtalk` channel section that point it at this fake: its app's credentials and URLs. */
  connection(): { client_id: string; client_secret: string; api_base: string; oapi_base: string; gateway_url: string } {
    return {
      client_id: this.clientId,
      client_secret: this.clientSecret,
      api_base: this.url,
      oapi_base: this.url,
      gateway_url: this.gatewayUrl,
    };
  }

  /** The next `times` calls to `api` fail with `kind`. */
  fail(api: FakeApi, kind: FaultKind, times = 1): void {
    this.faults.push({ api, kind, remaining: times });
  }

  /** Every sessionWebhook handed out so far expires now. */
  expireWebhooks(): void {
    for (const s of this.sessions.values()) s.expiresAt = 0;
  }

  set webhookLifetimeMs(ms: number) {
    this.webhookTtlMs = ms;
  }

  addGroup(cid: string): void {
    this.groups.add(cid);
  }

  /** A person of the organisation who can see the app (the robot may message them). */
  addStaff(user: FakeUser): void {
    this.staff.add(user.staffId);
  }

  dmId(user: FakeUser = ALICE): string {
    return `cid-dm-${user.staffId}`;
  }

  /** A user writes to the robot; resolves once delivered (stream: frame sent; HTTP: Antler answered). */
  async userSays(text: string, opts: SayOptions = {}): Promise<Delivery | undefined> {
    const user = opts.user ?? ALICE;
    if (opts.group && opts.mention === false) return undefined;
    return this.deliverRobot(this.robotMessage(text, user, opts.group), opts);
  }

  /**
   * A user sends a file as DingTalk delivers it: a picture (`picture`, or `richText` with its
   * caption), a document (`file`), a voice note (`audio`, with DingTalk's `recognition`) or a video.
   */
  async userSendsFile(file: UserFileSpec, opts: SayOptions = {}): Promise<Delivery | undefined> {
    if (file.caption !== undefined && file.kind !== "image") {
      throw new Error("fake dingtalk: DingTalk sends text with pictures only (as rich text), not with other files");
    }
    const user = opts.user ?? ALICE;
    if (opts.group && opts.mention === false) return undefined;
    const data = this.robotMessage("", user, opts.group);
    delete data.text;
    Object.assign(data, fileMessage(file, this.files.store(file), Boolean(opts.group)));
    return this.deliverRobot(data, opts);
  }

  /** Files the robot posted in a conversation, oldest first. */
  filesIn(conversationId: string): FakeFile[] {
    return this.chat.filesIn(conversationId);
  }

  /** A message from the robot itself arrives (DingTalk does not do this; the contract checks it is ignored). */
  async botEcho(text: string, opts: SayOptions = {}): Promise<Delivery | undefined> {
    const data = this.robotMessage(text, opts.user ?? ALICE, opts.group);
    data.senderId = this.botUserId;
    data.senderStaffId = "";
    data.senderNick = "Antler";
    return this.deliverRobot(data, opts);
  }

  /** Delivers the last user message again with the same ids. */
  async redeliverLast(): Promise<void> {
    const last = this.last;
    if (!last) throw new Error("fake dingtalk: nothing delivered yet");
    if (last.messageId) this.gateway.redeliver(last.messageId);
    else await this.post(last.data, last.opts);
  }

  /** The user clicks the button labelled `label` on the newest card showing it. */
  click(label: string, user: FakeUser = ALICE): string {
    const msg = [...this.chat.messages].reverse().find((m) => m.buttons.some((b) => b.text === label));
    const button = msg?.buttons.find((b) => b.text === label);
    if (!msg?.card || !button) throw new Error(`fake dingtalk: no card shows a button "${label}"`);
    if (!msg.card.streamCallbacks) throw new Error("fake dingtalk: card was created without callbackType STREAM");
    const group = !msg.conversationId.startsWith("cid-dm-");
    return this.gateway.deliver(TOPIC_CARD, {
      type: "actionCallback",
      outTrackId: msg.card.outTrackId,
      corpId: this.corpId,
      userId: user.staffId,
      userIdType: 1,
      spaceType: group ? "IM_GROUP" : "IM_ROBOT",
      spaceId: msg.conversationId,
      content: JSON.stringify({ cardPrivateData: { actionIds: [button.actionId], params: button.params } }),
    });
  }

  messagesIn(conversationId: string): FakeMessage[] {
    return this.chat.in(conversationId);
  }

  async close(): Promise<void> {
    this.gateway.close();
    await closeServer(this.server);
  }

  private robotMessage(text: string, user: FakeUser, group: string | undefined): Record<string, unknown> {
    const session = randomUUID();
    const expiresAt = Date.now() + this.webhookTtlMs;
    const conversationId = group ?? this.dmId(user);
    if (group) this.groups.add(group);
    this.staff.add(user.staffId);
    this.sessions.set(session, { conversationId, expiresAt });
    return {
      conversationId,
      conversationType: group ? "2" : "1",
      msgId: `msgid-${++this.seq}-${randomUUID().slice(0, 6)}`,
      msgtype: "text",
      // In groups DingTalk strips "@robot" but leaves the space after it.
      text: { content: group ? ` ${text}` : text },
      senderId: user.senderId,
      senderNick: user.nick,
      senderStaffId: user.staffId,
      senderCorpId: this.corpId,
      chatbotUserId: this.botUserId,
      chatbotCorpId: this.corpId,
      robotCode: this.robotCode,
      isInAtList: true,
      isAdmin: false,
      sessionWebhook: `${this.url}/robot/sendBySession?session=${session}`,
      sessionWebhookExpiredTime: expiresAt,
      createAt: Date.now(),
    };
  }

  private async deliverRobot(data: Record<string, unknown>, opts: SayOptions): Promise<Delivery> {
    const msgId = String(data.msgId);
    if (this.callbackUrl) {
      this.last = { data, opts };
      return { msgId, status: await this.post(data, opts) };
    }
    const messageId = this.gateway.deliver(TOPIC_ROBOT, data);
    this.last = { data, messageId, opts };
    return { msgId, messageId };
  }

  /**
   * HTTP mode: POSTs any body, signed as DingTalk signs callbacks (the signature covers only the
   * timestamp, so any body is "authentic"). For probing how Antler answers bad input.
   */
  async postSigned(body: string, opts: SayOptions & { contentType?: string } = {}): Promise<Response> {
    const timestamp = String(opts.timestamp ?? Date.now());
    const secret = opts.signWith ?? this.clientSecret;
    const sign = createHmac("sha256", secret).update(`${timestamp}\n${secret}`).digest("base64");
    return fetch(this.callbackUrl as string, {
      method: "POST",
      headers: { "content-type": opts.contentType ?? "application/json", timestamp, sign },
      body,
    });
  }

  /** A robot message as DingTalk would send it, without delivering it. */
  robotMessageFor(text: string, user: FakeUser = ALICE): Record<string, unknown> {
    return this.robotMessage(text, user, undefined);
  }

  private async post(data: Record<string, unknown>, opts: SayOptions): Promise<number> {
    const timestamp = String(opts.timestamp ?? Date.now());
    const secret = opts.signWith ?? this.clientSecret;
    const sign = createHmac("sha256", secret).update(`${timestamp}\n${secret}`).digest("base64");
    const res = await fetch(this.callbackUrl as string, {
      method: "POST",
      headers: { "content-type": "application/json", timestamp, sign },
      body: JSON.stringify(data),
    });
    await res.text();
    return res.status;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method === "GET" && url.pathname.startsWith("/files/")) return this.files.serve(url.pathname, res);
    if (`${req.method} ${url.pathname}` === "POST /media/upload") return this.upload(req, url, Buffer.concat(chunks), res);
    let body: Record<string, unknown> = {};
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
    } catch {
      return this.reply(res, "parse", body, { status: 400, body: { code: "InvalidParameter", message: "body is not JSON" } });
    }
    const route = `${req.method} ${url.pathname}`;
    if (route === "POST /v1.0/gateway/connections/open") {
      if (body.clientId !== this.clientId || body.clientSecret !== this.clientSecret) {
        return this.reply(res, "gateway", body, {
          status: 400,
          body: { code: "invalidClientIdOrSecret", message: "bad credentials" },
        });
      }
      if (req.headers.accept !== "application/json") return this.reply(res, "gateway", body, { status: 406, body: {} });
      const subs = (body.subscriptions as Array<{ type: string; topic: string }>) ?? [];
      const wsUrl = `${this.url.replace("http", "ws")}/gateway/stream`;
      return this.reply(res, "gateway", body, { status: 200, body: this.gateway.open(subs, wsUrl) });
    }
    const api = apiOf(route);
    if (!api) return this.reply(res, route, body, { status: 404, body: { code: "NotFound", message: route } });
    const injected = this.injected(api);
    if (injected) return this.reply(res, api, body, injected);
    if (api === "token") return this.reply(res, api, body, this.api.token(body));
    if (api === "webhook") return this.reply(res, api, body, this.api.webhook(url.searchParams.get("session") ?? "", body));
    const tokenProblem = this.api.checkToken(headerOf(req, "x-acs-dingtalk-access-token"));
    if (tokenProblem) return this.reply(res, api, body, tokenProblem);
    if (api === "card.create") return this.reply(res, api, body, this.api.createCard(body));
    if (api === "card.stream") return this.reply(res, api, body, this.api.streamCard(body));
    if (api === "card.update") return this.reply(res, api, body, this.api.updateCard(body));
    if (api === "robot.download") return this.reply(res, api, body, this.files.downloadLink(body));
    if (api === "robot.group" || api === "robot.dm") return this.reply(res, api, body, this.api.robotSend(api, body));
    return this.reply(res, api, body, { status: 404, body: { code: "NotFound", message: route } });
  }

  /** The older host's media upload: multipart, token in the query, failures as `{errcode}` with HTTP 200. */
  private async upload(req: IncomingMessage, url: URL, raw: Buffer, res: ServerResponse): Promise<void> {
    const record = { type: url.searchParams.get("type"), bytes: raw.byteLength };
    const injected = this.injected("media.upload");
    if (injected) return this.reply(res, "media.upload", record, injected);
    const tokenOk = (token: string | null) => !this.api.checkToken(token ?? undefined);
    const reply = await this.files.upload(url.searchParams, headerOf(req, "content-type") ?? "", raw, tokenOk);
    return this.reply(res, "media.upload", record, reply);
  }

  private injected(api: FakeApi): Reply | undefined {
    const fault = this.faults.find((f) => f.api === api && f.remaining > 0);
    if (!fault) return undefined;
    fault.remaining--;
    if (fault.kind === "too_fast") return { status: 200, body: { errcode: 130101, errmsg: "send too fast" } };
    if (fault.kind === "qps") {
      return { status: 403, body: { code: "Forbidden.AccessDenied.QpsLimitForApi", message: "qps limit for api exceeded" } };
    }
    if (fault.kind === "auth") return { status: 401, body: { code: "InvalidAuthentication", message: "invalid token" } };
    return { status: 503, body: { code: "ServiceUnavailable", message: "try again later" } };
  }

  private reply(res: ServerResponse, api: string, body: unknown, reply: Reply): void {
    this.calls.push({ api, body, status: reply.status, at: Date.now() });
    res.writeHead(reply.status, { "content-type": "application/json" });
    res.end(JSON.stringify(reply.body));
  }
}

function apiOf(route: string): FakeApi | undefined {
  const table: Record<string, FakeApi> = {
    "POST /v1.0/oauth2/accessToken": "token",
    "POST /v1.0/card/instances/createAndDeliver": "card.create",
    "PUT /v1.0/card/streaming": "card.stream",
    "PUT /v1.0/card/instances": "card.update",
    "POST /v1.0/robot/groupMessages/send": "robot.group",
    "POST /v1.0/robot/oToMessages/batchSend": "robot.dm",
    "POST /v1.0/robot/messageFiles/download": "robot.download",
    "POST /robot/sendBySession": "webhook",
  };
  return table[route];
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
