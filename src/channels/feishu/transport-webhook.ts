/**
 * The webhook route. Checks happen here, on the raw bytes, before anything is dispatched:
 * decryption with `encrypt_key` (AES-256-CBC, key = SHA-256 of the key string), the
 * `X-Lark-Signature` over timestamp + nonce + key + body and the freshness of that timestamp,
 * the verification token, and the event's shape (and age, for unsigned events). The SDK's
 * own adapters answer 200 to a forged request and skip the token, so they are not used.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import * as lark from "@larksuiteoapi/node-sdk";
import { HttpError, isJsonObject, readBody, sendJson } from "../../server/http.js";
import { eventProblem } from "./webhook-check.js";

export interface WebhookOptions {
  encryptKey?: string;
  verificationToken?: string;
  /** Hands a decrypted, verified envelope to the event dispatcher; its result is the response body. */
  dispatch(envelope: Record<string, unknown>): Promise<unknown>;
  /** Called for every request refused, with the reason (for status and logs). */
  onRejected?(reason: string): void;
}

/** How far a signed request's timestamp may be from our clock, as Slack allows. */
export const SIGNED_WINDOW_MS = 5 * 60_000;
/**
 * How old a plain (unsigned) event may be. Its only time is `header.create_time`, which Feishu
 * keeps on redeliveries (15 s, 5 min, 1 h, 6 h after the first try), so the window must cover
 * the last one; the 48-hour dedupe covers anything younger.
 */
export const PLAIN_WINDOW_MS = 8 * 3600_000;
/** How far in the future a plain event's `create_time` may be (clock skew). */
const FUTURE_SKEW_MS = 5 * 60_000;

class Rejection extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The route's handler. Refusals are thrown as HttpError with Feishu's `{code, msg}` body: the
 * server answers them and logs them rate-limited. The body is read by the shared reader, which
 * answers 413 over `server.max_body_bytes` before anything here runs.
 */
export function feishuWebhookHandler(options: WebhookOptions) {
  const cipher = options.encryptKey ? new lark.AESCipher(options.encryptKey) : undefined;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = (await readBody(req)).toString("utf8");
    let envelope: Record<string, unknown>;
    try {
      envelope = open(raw, req, options, cipher);
    } catch (err) {
      const rejection = err instanceof Rejection ? err : new Rejection(400, "unreadable request");
      options.onRejected?.(rejection.message);
      throw new HttpError(rejection.status, `feishu webhook: ${rejection.message}`, {
        code: rejection.status,
        msg: rejection.message,
      });
    }
    if (envelope.type === "url_verification") {
      sendJson(res, 200, { challenge: envelope.challenge });
      return;
    }
    // A failure here (e.g. the inbox could not record the event) answers 500, so Feishu redelivers.
    const result = await options.dispatch(envelope);
    sendJson(res, 200, result && typeof result === "object" ? result : {});
  };
}

/** Decrypts and verifies one request body; throws a {@link Rejection} when it must not be handled. */
function open(
  raw: string,
  req: IncomingMessage,
  options: WebhookOptions,
  cipher: lark.AESCipher | undefined,
): Record<string, unknown> {
  const outer = parseObject(raw, "body is not JSON");
  const signature = header(req, "x-lark-signature");
  let envelope = outer;
  if (cipher) {
    if (typeof outer.encrypt !== "string") throw new Rejection(400, "body is not encrypted but encrypt_key is set");
    let plain: string;
    try {
      plain = cipher.decrypt(outer.encrypt);
    } catch {
      throw new Rejection(400, "body could not be decrypted with encrypt_key");
    }
    envelope = parseObject(plain, "decrypted body is not JSON");
    const isChallenge = envelope.type === "url_verification";
    // URL verification may come unsigned; decrypting it already proved the sender has the key.
    if (signature || !isChallenge) verifySignature(raw, req, options.encryptKey as string, signature);
  }
  checkToken(envelope, options.verificationToken);
  if (envelope.type !== "url_verification") checkEvent(envelope, !cipher);
  return envelope;
}

/**
 * A schema 2.0 event with a header Antler can dedupe on. Unsigned events must also be recent:
 * signed ones were checked by their request timestamp already.
 */
function checkEvent(envelope: Record<string, unknown>, plain: boolean, now = Date.now()): void {
  const head = envelope.header;
  if (!isJsonObject(head) || typeof head.event_type !== "string" || typeof head.event_id !== "string") {
    throw new Rejection(400, "not a schema 2.0 event: header.event_type or header.event_id is missing");
  }
  if (!isJsonObject(envelope.event)) throw new Rejection(400, "not a schema 2.0 event: event is not an object");
  const problem = eventProblem(head.event_type, envelope.event);
  if (problem) throw new Rejection(400, `${head.event_type}: ${problem}`);
  if (!plain) return;
  const created = Number(head.create_time);
  if (!Number.isFinite(created)) throw new Rejection(400, "header.create_time is missing");
  if (now - created > PLAIN_WINDOW_MS || created - now > FUTURE_SKEW_MS) {
    throw new Rejection(401, "header.create_time is outside the accepted window: a replayed event?");
  }
}

function verifySignature(raw: string, req: IncomingMessage, encryptKey: string, signature: string | undefined): void {
  const ts = header(req, "x-lark-request-timestamp");
  const nonce = header(req, "x-lark-request-nonce");
  if (!signature || !ts || !nonce) throw new Rejection(401, "missing X-Lark-Signature headers");
  const expected = createHash("sha256")
    .update(ts + nonce + encryptKey + raw)
    .digest("hex");
  const a = Buffer.from(expected);
  const b = Buffer.from(signature);
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw new Rejection(401, "bad X-Lark-Signature");
  // The timestamp is part of what is signed, so a recent one proves the request is not a replay.
  if (!(Math.abs(Date.now() - Number(ts) * 1000) <= SIGNED_WINDOW_MS)) {
    throw new Rejection(401, "X-Lark-Request-Timestamp is more than 5 minutes off: a replayed request?");
  }
}

/** Schema 2.0 carries the token in `header.token`; URL verification and v1 events at the top. */
function checkToken(envelope: Record<string, unknown>, expected: string | undefined): void {
  if (!expected) return;
  const headerObj = envelope.header as { token?: unknown } | undefined;
  const token = headerObj?.token ?? envelope.token;
  if (token !== expected) throw new Rejection(401, "verification token does not match");
}

function parseObject(text: string, problem: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (isJsonObject(value)) return value;
  } catch {
    // fall through
  }
  throw new Rejection(400, problem);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
