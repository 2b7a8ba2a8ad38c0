/**
 * `POST /api/send` and `POST /api/runs`: a message posted, or an agent turn started, in a
 * conversation nobody just wrote in. Each request needs an `Idempotency-Key`; it is written to
 * the outbox before the 202, so the caller may retry it (also on another replica) until it hears
 * back. `GET /api/send/<id>` and `GET /api/runs/<id>` show where it stands.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { OutboxEntry } from "../bindings/outbox.js";
import { type AcceptRequest, RefusedRequest } from "../core/outbox/index.js";
import { HttpError, readJson } from "../server/body.js";
import { sendJson } from "../server/http.js";
import { type Caller, sees } from "./admin-caller.js";
import { type AdminContext, type Call, speakerOf } from "./admin-context.js";

const Target = z.union([
  z.strictObject({ key: z.string().min(1) }),
  z.strictObject({ chat: z.string().min(1), thread: z.string().min(1).optional(), workspace: z.string().min(1).optional() }),
  z.strictObject({ user: z.string().min(1), workspace: z.string().min(1).optional() }),
]);

const File = z.strictObject({
  name: z.string().min(1).max(200),
  mime: z.string().min(1).default("application/octet-stream"),
  /** Base64. */
  data: z
    .string()
    .min(1)
    .regex(/^[A-Za-z0-9+/=\s]+$/, "data must be base64"),
  kind: z.enum(["image", "file"]).optional(),
});

const SendBody = z.strictObject({
  channel: z.string().min(1),
  target: Target,
  text: z.string().default(""),
  files: z.array(File).max(10).optional(),
});

const RunBody = z.strictObject({
  channel: z.string().min(1),
  target: Target,
  prompt: z.string().min(1),
  agent: z.string().min(1).optional(),
  thread: z.enum(["fresh", "conversation"]).optional(),
});

/** How an entry looks to an API caller. */
export function entryView(entry: OutboxEntry & { tenant?: string }) {
  const result = (entry.result ?? {}) as { ids?: string[]; run?: string; key?: string };
  // A target resolved on arrival names its conversation before delivery (the entry's own key orders it).
  const resolved = (entry.payload as { target?: { ref?: { key?: string } } } | null)?.target?.ref?.key;
  return {
    id: entry.id,
    kind: entry.kind,
    state: entry.state,
    channel: entry.channel,
    conversation: result.key ?? resolved ?? entry.key,
    ...(entry.tenant ? { tenant: entry.tenant } : {}),
    source: entry.source,
    attempts: entry.attempts,
    ...(result.ids ? { message_ids: result.ids } : {}),
    ...(entry.error ? { error: entry.error, error_code: entry.errorCode } : {}),
    created_at: new Date(entry.createdAt).toISOString(),
    ...(entry.sentAt ? { sent_at: new Date(entry.sentAt).toISOString() } : {}),
    ...(entry.state === "queued" && entry.attempts > 0 ? { next_attempt_at: new Date(entry.nextAttemptAt).toISOString() } : {}),
  };
}

function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ");
}

async function requestOf(kind: "send" | "run", req: IncomingMessage): Promise<AcceptRequest> {
  const body = await readJson(req);
  if (kind === "send") {
    const parsed = SendBody.safeParse(body);
    if (!parsed.success) throw new HttpError(400, issues(parsed.error));
    const { files, ...rest } = parsed.data;
    if (rest.text.trim() === "" && !files?.length) throw new HttpError(400, "text: give a text or at least one file");
    const out = files?.map((f) => ({
      name: f.name,
      mime: f.mime,
      data: f.data.replace(/\s/g, ""),
      kind: f.kind ?? (f.mime.startsWith("image/") ? ("image" as const) : ("file" as const)),
    }));
    return { kind, ...rest, ...(out ? { files: out } : {}) };
  }
  const parsed = RunBody.safeParse(body);
  if (!parsed.success) throw new HttpError(400, issues(parsed.error));
  return { kind, ...parsed.data };
}

/** `POST /api/send` and `POST /api/runs`. */
function acceptHandler(kind: "send" | "run") {
  return async (admin: AdminContext, req: IncomingMessage, res: ServerResponse, { caller }: Call<Caller>) => {
    const key = req.headers["idempotency-key"];
    if (typeof key !== "string" || key.trim() === "" || key.length > 200) {
      throw new HttpError(400, "an Idempotency-Key header (1-200 characters) is required: the same key makes a retry safe");
    }
    const request = await requestOf(kind, req);
    if (admin.source.report(request.channel) === undefined || !sees(caller, admin.source.tenantOf(request.channel))) {
      throw new HttpError(404, `no channel named ${request.channel}`);
    }
    try {
      const { entry, replayed } = await speakerOf(admin).accept(request, key.trim());
      if (entry.kind !== kind)
        throw new RefusedRequest(409, "idempotency_conflict", "this Idempotency-Key was used before with another request");
      sendJson(res, replayed ? 200 : 202, entryView(entry), replayed ? { "idempotent-replayed": "true" } : {});
    } catch (err) {
      if (err instanceof RefusedRequest) throw new HttpError(err.status, err.message, { error: err.message, code: err.code });
      throw err;
    }
  };
}

/** `GET /api/send/:id` and `GET /api/runs/:id`. */
function showHandler(kind: "send" | "run") {
  return async (admin: AdminContext, _req: IncomingMessage, res: ServerResponse, { params, caller }: Call<Caller>) => {
    const id = params.id ?? "";
    const entry = await speakerOf(admin).outbound(id, caller.tenant);
    if (!entry || entry.kind !== kind) throw new HttpError(404, `no ${kind === "send" ? "message" : "run"} with id ${id}`);
    sendJson(res, 200, entryView(entry));
  };
}

/** `GET /api/outbox?state=&channel=&limit=`: the newest entries, for the operator. */
async function listHandler(admin: AdminContext, req: IncomingMessage, res: ServerResponse, { caller }: Call<Caller>) {
  const q = new URL(req.url ?? "/", "http://localhost").searchParams;
  const state = q.get("state") ?? undefined;
  const states = ["queued", "sending", "running", "sent", "failed"];
  if (state && !states.includes(state)) throw new HttpError(400, `state must be one of ${states.join(", ")}`);
  const limit = Math.min(500, Math.max(1, Number(q.get("limit") ?? 100) || 100));
  const filter = {
    limit,
    ...(state ? { state: state as OutboxEntry["state"] } : {}),
    ...(q.get("channel") ? { channel: q.get("channel") as string } : {}),
  };
  const entries = await speakerOf(admin).listOutbound(filter, caller.tenant);
  sendJson(res, 200, { entries: entries.map(entryView) });
}

export const SEND_ROUTES = [
  { method: "POST", path: "/api/send", handler: acceptHandler("send") },
  { method: "GET", path: "/api/send/:id", handler: showHandler("send") },
  { method: "POST", path: "/api/runs", handler: acceptHandler("run") },
  { method: "GET", path: "/api/runs/:id", handler: showHandler("run") },
  { method: "GET", path: "/api/outbox", handler: listHandler },
] as const;
