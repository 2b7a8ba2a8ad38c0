/**
 * The fake's Open Platform HTTP API: tokens, bot info, im messages (send, reply, PATCH card,
 * PUT text, reactions), chat lookups, image and file uploads and message resources (files.ts), CardKit
 * (create, element content, settings, full update, elements added, replaced and deleted) and the
 * long connection's endpoint. It
 * refuses what Feishu refuses: missing or bad tokens, malformed cards, PATCH on unshared cards,
 * non-increasing sequences (300317), streaming into a closed card, more than 10 operations/s
 * on a card or 5 PATCHes/s on a message (429 + 99991400), files over the upload limits.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { getResource, uploadFile, uploadImage } from "./files.js";
import { boundaryOf, type Part, parseMultipart } from "./multipart.js";
import { applyCardOp, applyMessageOp, chatInfo, ok, type Reply } from "./openapi-ops.js";
import type { FaultOp, FeishuWorld } from "./state.js";

interface Route {
  method: string;
  pattern: RegExp;
  op: FaultOp | "reaction_delete";
  auth: boolean;
}

const ROUTES: Route[] = [
  { method: "POST", pattern: /^\/open-apis\/auth\/v3\/tenant_access_token\/internal$/, op: "token", auth: false },
  { method: "POST", pattern: /^\/callback\/ws\/endpoint$/, op: "ws_endpoint", auth: false },
  { method: "GET", pattern: /^\/open-apis\/bot\/v3\/info$/, op: "bot_info", auth: true },
  { method: "POST", pattern: /^\/open-apis\/im\/v1\/messages$/, op: "send", auth: true },
  { method: "POST", pattern: /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reply$/, op: "reply", auth: true },
  { method: "PATCH", pattern: /^\/open-apis\/im\/v1\/messages\/([^/]+)$/, op: "patch", auth: true },
  { method: "PUT", pattern: /^\/open-apis\/im\/v1\/messages\/([^/]+)$/, op: "update", auth: true },
  { method: "POST", pattern: /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reactions$/, op: "reaction", auth: true },
  {
    method: "DELETE",
    pattern: /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reactions\/([^/]+)$/,
    op: "reaction_delete",
    auth: true,
  },
  { method: "POST", pattern: /^\/open-apis\/cardkit\/v1\/cards$/, op: "card_create", auth: true },
  { method: "GET", pattern: /^\/open-apis\/im\/v1\/chats\/([^/]+)$/, op: "chat_get", auth: true },
  { method: "POST", pattern: /^\/open-apis\/im\/v1\/images$/, op: "image_upload", auth: true },
  { method: "POST", pattern: /^\/open-apis\/im\/v1\/files$/, op: "file_upload", auth: true },
  { method: "GET", pattern: /^\/open-apis\/im\/v1\/messages\/([^/]+)\/resources\/([^/]+)$/, op: "resource", auth: true },
  {
    method: "PUT",
    pattern: /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/elements\/([^/]+)\/content$/,
    op: "card_content",
    auth: true,
  },
  { method: "PATCH", pattern: /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/settings$/, op: "card_settings", auth: true },
  { method: "POST", pattern: /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/elements$/, op: "element_create", auth: true },
  { method: "PUT", pattern: /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/elements\/([^/]+)$/, op: "element_update", auth: true },
  {
    method: "DELETE",
    pattern: /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/elements\/([^/]+)$/,
    op: "element_delete",
    auth: true,
  },
  { method: "PUT", pattern: /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)$/, op: "card_update", auth: true },
];

export interface OpenApiEnv {
  world: FeishuWorld;
  /** ws:// URL (with ticket) the endpoint hands out. */
  wsUrl(): string;
}

export async function handleOpenApi(env: OpenApiEnv, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://fake");
  const raw = await readBody(req);
  const boundary = boundaryOf(req.headers["content-type"]);
  const parts = boundary ? parseMultipart(raw, boundary) : undefined;
  const body = boundary ? formFields(parts) : parseJson(raw);
  const route = ROUTES.find((r) => r.method === req.method && r.pattern.test(url.pathname));
  const { world } = env;
  let reply: Reply;
  if (!route) {
    reply = { status: 404, body: { code: 404, msg: `no such API: ${req.method} ${url.pathname}` } };
  } else if (route.auth && !req.headers.authorization) {
    reply = { status: 400, body: { code: 99991661, msg: "Missing access token for authorization" } };
  } else if (route.auth && !world.validToken(req.headers.authorization)) {
    reply = { status: 400, body: { code: 99991663, msg: "Invalid access token for authorization" } };
  } else {
    const fault = route.op === "reaction_delete" ? undefined : world.takeFault(route.op, body.msg_type);
    if (fault) {
      const headers: Record<string, string> = fault.retryAfterSec ? { "x-ogw-ratelimit-reset": String(fault.retryAfterSec) } : {};
      reply = { status: fault.status, body: { code: fault.code, msg: fault.msg ?? "injected fault" }, headers };
    } else {
      const params = (route.pattern.exec(url.pathname) ?? []).slice(1);
      reply = dispatch(env, route.op, params, url, body, parts);
    }
  }
  world.calls.push({
    op: route?.op ?? "unknown",
    at: Date.now(),
    status: reply.status,
    code: Number((reply.body as { code?: number } | undefined)?.code ?? 0),
    path: url.pathname,
    body,
  });
  if (reply.raw) {
    if (route?.op === "resource" && world.downloadStalls.take(res, reply.raw.data, { "content-type": reply.raw.contentType }))
      return;
    const length = reply.raw.chunked ? {} : { "content-length": String(reply.raw.data.length) };
    res.writeHead(reply.status, { "content-type": reply.raw.contentType, ...length });
    res.end(reply.raw.data);
    return;
  }
  res.writeHead(reply.status, { "content-type": "application/json; charset=utf-8", ...(reply.headers ?? {}) });
  res.end(JSON.stringify(reply.body));
}

function dispatch(
  env: OpenApiEnv,
  op: Route["op"],
  params: string[],
  url: URL,
  body: Record<string, unknown>,
  parts: Part[] | undefined,
): Reply {
  const { world } = env;
  const o = world.options;
  switch (op) {
    case "image_upload":
      return uploadImage(world, parts);
    case "file_upload":
      return uploadFile(world, parts);
    case "resource":
      return getResource(world, params[0] ?? "", params[1] ?? "", url.searchParams.get("type"));
    case "token":
      if (body.app_id !== o.appId || body.app_secret !== o.appSecret) {
        return { status: 200, body: { code: 10014, msg: "app secret invalid" } };
      }
      return ok({ tenant_access_token: world.issueToken().token, expire: 7200 }, false);
    case "ws_endpoint":
      if (body.AppID !== o.appId || body.AppSecret !== o.appSecret)
        return { status: 200, body: { code: 514, msg: "auth failed", data: {} } };
      return ok({
        data: {
          URL: env.wsUrl(),
          ClientConfig: { PingInterval: 120, ReconnectCount: -1, ReconnectInterval: 0.2, ReconnectNonce: 0 },
        },
      });
    case "bot_info":
      return ok(
        { bot: { activate_status: 2, app_name: o.botName, avatar_url: "", ip_white_list: [], open_id: o.botOpenId } },
        false,
      );
    case "chat_get":
      return chatInfo(world, params[0] ?? "");
    case "card_create":
    case "card_content":
    case "card_settings":
    case "card_update":
    case "element_create":
    case "element_update":
    case "element_delete":
      return applyCardOp(world, op, params, body);
    default:
      return applyMessageOp(world, op, params, url, body);
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The text fields of a form (files stay in the parts), for the call log and faults. */
function formFields(parts: Part[] | undefined): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const p of parts ?? [])
    fields[p.name] = p.filename !== undefined || p.data.length > 1024 ? `<${p.data.length} bytes>` : p.data.toString("utf8");
  return fields;
}

function parseJson(raw: Buffer): Record<string, unknown> {
  const text = raw.toString("utf8");
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
