/**
 * The OpenAPI side of the fake DingTalk: access tokens, AI cards (create/stream/update), the
 * robot send APIs and the sessionWebhook. Each handler checks what DingTalk checks and answers
 * in DingTalk's two error styles: non-2xx `{code, message}` (api.dingtalk.com) and 200
 * `{errcode, errmsg}` (sessionWebhook).
 */
import { randomUUID } from "node:crypto";
import type { FakeChat } from "./chat.js";

export type FakeApi =
  | "token"
  | "card.create"
  | "card.stream"
  | "card.update"
  | "webhook"
  | "robot.group"
  | "robot.dm"
  | "robot.download"
  | "media.upload";
export type FaultKind = "qps" | "too_fast" | "server" | "auth";

export interface Reply {
  status: number;
  body: Record<string, unknown>;
}

export interface TemplateSpec {
  /** The markdown variable with streaming on: the only one `PUT /v1.0/card/streaming` takes. */
  contentKey: string;
  buttonsKey?: string;
  /** A plain markdown variable placed under the content (for the progress view); data updates set it. */
  progressKey?: string;
}

export interface Session {
  conversationId: string;
  expiresAt: number;
}

/** What the OpenAPI handlers need to know about the fake's world. */
export interface OpenApiWorld {
  clientId: string;
  clientSecret: string;
  robotCode: string;
  tokenTtlSec: number;
  templates: Record<string, TemplateSpec>;
  chat: FakeChat;
  sessions: Map<string, Session>;
  /** conversationId of the DM with a staff id; undefined for one outside the organisation or the app's visible range. */
  dmOf(staffId: string): string | undefined;
  isGroup(conversationId: string): boolean;
  streamingQps: number;
  webhookPerMinute: number;
  /** Posts an uploaded file for a file `msgKey`; a refusal, or undefined once posted (files.ts). */
  postFile(conversationId: string, msgKey: string, param: Record<string, unknown>): Reply | undefined;
}

/** msgKeys the robot send APIs take here: text and markdown, an uploaded image, an uploaded file. */
const MSG_KEYS = new Set(["sampleMarkdown", "sampleText", "sampleImageMsg", "sampleFile"]);

export const MSG_PARAM_MAX_BYTES = 15 * 1024;
export const WEBHOOK_TEXT_MAX_BYTES = 20_000;

export const bad = (code: string, message: string, status = 400): Reply => ({
  status,
  body: { code, message, requestid: randomUUID() },
});
const ok = (body: Record<string, unknown>): Reply => ({ status: 200, body });

export class OpenApi {
  tokensIssued = 0;
  private readonly tokens = new Map<string, number>();
  private readonly recent = new Map<string, number[]>();

  constructor(private readonly w: OpenApiWorld) {}

  /** Forgets every token, as if they all expired. */
  expireTokens(): void {
    this.tokens.clear();
  }

  token(body: Record<string, unknown>): Reply {
    if (body.appKey !== this.w.clientId || body.appSecret !== this.w.clientSecret) {
      return bad("invalidClientIdOrSecret", "无效的clientId或者clientSecret");
    }
    const token = `tok-${randomUUID()}`;
    this.tokens.set(token, Date.now() + this.w.tokenTtlSec * 1000);
    this.tokensIssued++;
    return ok({ accessToken: token, expireIn: this.w.tokenTtlSec });
  }

  /** undefined when the token header is valid. */
  checkToken(token: string | undefined): Reply | undefined {
    const until = token ? this.tokens.get(token) : undefined;
    if (until === undefined || until < Date.now()) return bad("InvalidAuthentication", "不合法的access_token", 401);
    return undefined;
  }

  /** Counts a call against a per-window limit; true when over it. */
  overLimit(key: string, limit: number, windowMs: number): boolean {
    const now = Date.now();
    const times = (this.recent.get(key) ?? []).filter((t) => now - t < windowMs);
    times.push(now);
    this.recent.set(key, times);
    return times.length > limit;
  }

  createCard(body: Record<string, unknown>): Reply {
    const templateId = String(body.cardTemplateId ?? "");
    const spec = this.w.templates[templateId];
    if (!spec) return bad("param.templateNotExist", `card template ${templateId} does not exist`);
    const outTrackId = body.outTrackId;
    if (typeof outTrackId !== "string" || !outTrackId) return bad("InvalidParameter", "outTrackId is required");
    if (this.w.chat.card(outTrackId)) return bad("param.outTrackIdExist", "outTrackId already used");
    const params = stringMap((body.cardData as { cardParamMap?: unknown } | undefined)?.cardParamMap);
    if (!params) return bad("InvalidParameter", "cardParamMap values must be strings");
    const space = /^dtv1\.card\/\/(IM_GROUP|IM_ROBOT)\.(.+)$/.exec(String(body.openSpaceId ?? ""));
    if (!space) return bad("InvalidParameter", "openSpaceId is malformed");
    const [, kind, id] = space as unknown as [string, string, string];
    let conversationId: string | undefined;
    if (kind === "IM_GROUP") {
      const deliver = body.imGroupOpenDeliverModel as { robotCode?: string } | undefined;
      if (deliver?.robotCode !== this.w.robotCode) return bad("InvalidParameter", "imGroupOpenDeliverModel.robotCode is wrong");
      conversationId = this.w.isGroup(id) ? id : undefined;
    } else {
      if (!body.imRobotOpenDeliverModel) return bad("InvalidParameter", "imRobotOpenDeliverModel is required");
      conversationId = this.w.dmOf(id);
    }
    if (!conversationId) return bad("param.openSpaceIdInvalid", `no such space ${id}`);
    const card = {
      outTrackId,
      templateId,
      params,
      flowStatus: params.flowStatus ?? "1",
      streamCallbacks: body.callbackType === "STREAM",
      streamed: 0,
    };
    this.w.chat.addCard(conversationId, card, spec);
    return ok({
      success: true,
      result: { outTrackId, deliverResults: [{ spaceType: kind, spaceId: id, success: true, carrierId: randomUUID() }] },
    });
  }

  streamCard(body: Record<string, unknown>): Reply {
    const msg = this.w.chat.card(String(body.outTrackId ?? ""));
    const card = msg?.card;
    if (!msg || !card) return bad("param.cardNotExist", "card does not exist", 404);
    const spec = this.w.templates[card.templateId] as TemplateSpec;
    if (body.key !== spec.contentKey) return bad("InvalidParameter", `template has no streaming variable ${String(body.key)}`);
    if (typeof body.guid !== "string" || !body.guid) return bad("InvalidParameter", "guid is required");
    if (typeof body.content !== "string") return bad("InvalidParameter", "content must be a string");
    if (card.flowStatus === "3" || card.flowStatus === "5") return bad("card.streamingClosed", "card streaming already ended");
    if (this.overLimit("card.stream", this.w.streamingQps, 1000)) {
      return bad("Forbidden.AccessDenied.QpsLimitForApi", "qps limit for api exceeded", 403);
    }
    const before = body.isFull === true ? "" : (card.params[spec.contentKey] ?? "");
    card.params[spec.contentKey] = before + body.content;
    card.flowStatus = body.isError === true ? "5" : body.isFinalize === true ? "3" : "2";
    card.params.flowStatus = card.flowStatus;
    card.streamed++;
    this.w.chat.refreshCard(msg, spec);
    return ok({ success: true });
  }

  updateCard(body: Record<string, unknown>): Reply {
    const msg = this.w.chat.card(String(body.outTrackId ?? ""));
    const card = msg?.card;
    if (!msg || !card) return bad("param.cardNotExist", "card does not exist", 404);
    const params = stringMap((body.cardData as { cardParamMap?: unknown } | undefined)?.cardParamMap);
    if (!params) return bad("InvalidParameter", "cardParamMap values must be strings");
    const byKey = (body.cardUpdateOptions as { updateCardDataByKey?: boolean } | undefined)?.updateCardDataByKey === true;
    card.params = byKey ? { ...card.params, ...params } : params;
    card.flowStatus = card.params.flowStatus ?? card.flowStatus;
    const spec = this.w.templates[card.templateId] as TemplateSpec;
    this.w.chat.refreshCard(msg, spec);
    return ok({ success: true, result: true });
  }

  robotSend(api: "robot.group" | "robot.dm", body: Record<string, unknown>): Reply {
    if (body.robotCode !== this.w.robotCode) return bad("resource.not.found", "robot does not exist", 400);
    const msgKey = String(body.msgKey ?? "");
    if (!MSG_KEYS.has(msgKey)) return bad("InvalidParameter", "unsupported msgKey");
    const raw = String(body.msgParam ?? "");
    if (Buffer.byteLength(raw) > MSG_PARAM_MAX_BYTES) return bad("InvalidParameter.msgParam", "msgParam too long");
    const param = JSON.parse(raw) as Record<string, unknown>;
    if (api === "robot.dm" && !(body.userIds as unknown[] | undefined)?.length) {
      return bad("invalidParameter.userIds.empty", "The user userId list is empty.");
    }
    const conversationId = this.robotTarget(api, body);
    if (!conversationId && api === "robot.group") return bad("invalid.openConversationId", "无效的openConversationId");
    if (!conversationId) {
      // DingTalk answers 200 and lists the staff ids it could not reach.
      const invalidStaffIdList = (body.userIds as unknown[] | undefined) ?? [];
      return ok({ processQueryKey: `pqk-${randomUUID()}`, invalidStaffIdList, flowControlledStaffIdList: [] });
    }
    const processQueryKey = `pqk-${randomUUID()}`;
    if (msgKey === "sampleImageMsg" || msgKey === "sampleFile") {
      const refused = this.w.postFile(conversationId, msgKey, param);
      if (refused) return refused;
    } else {
      const markdown = msgKey === "sampleMarkdown" ? String(param.text ?? "") : String(param.content ?? "");
      this.w.chat.post(conversationId, "robot", String(param.title ?? ""), markdown).queryKey = processQueryKey;
    }
    return ok({ processQueryKey, invalidStaffIdList: [], flowControlledStaffIdList: [] });
  }

  /** The conversation a robot send goes to: the group, or the DM with the one listed user. */
  private robotTarget(api: "robot.group" | "robot.dm", body: Record<string, unknown>): string | undefined {
    if (api === "robot.group") {
      return this.w.isGroup(String(body.openConversationId)) ? String(body.openConversationId) : undefined;
    }
    const ids = body.userIds as string[] | undefined;
    if (!ids?.length) return undefined;
    if (ids.length !== 1) throw new Error("fake dingtalk: batchSend to several users is not modelled");
    return this.w.dmOf(ids[0] as string);
  }

  webhook(session: string, body: Record<string, unknown>): Reply {
    const s = this.w.sessions.get(session);
    if (!s || s.expiresAt < Date.now()) return ok({ errcode: 300001, errmsg: "session 不存在" });
    if (this.overLimit(`webhook:${s.conversationId}`, this.w.webhookPerMinute, 60_000)) {
      return ok({ errcode: 130101, errmsg: "send too fast, exceed 20 times per minute" });
    }
    let title = "";
    let markdown: string;
    if (body.msgtype === "markdown") {
      const md = body.markdown as { title?: string; text?: string } | undefined;
      if (!md?.title || typeof md.text !== "string") return ok({ errcode: 40035, errmsg: "缺少参数 markdown.title/text" });
      title = md.title;
      markdown = md.text;
    } else if (body.msgtype === "text") {
      markdown = String((body.text as { content?: string } | undefined)?.content ?? "");
    } else {
      return ok({ errcode: 40035, errmsg: "不支持的msgtype" });
    }
    if (Buffer.byteLength(markdown) > WEBHOOK_TEXT_MAX_BYTES) return ok({ errcode: 460101, errmsg: "message too long" });
    this.w.chat.post(s.conversationId, "webhook", title, markdown);
    return ok({ errcode: 0, errmsg: "ok" });
  }
}

function stringMap(value: unknown): Record<string, string> | undefined {
  if (!value || typeof value !== "object") return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") return undefined;
    out[k] = v;
  }
  return out;
}
