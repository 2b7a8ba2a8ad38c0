/**
 * The webhook route. Checks happen here, on the raw bytes, before anything is dispatched:
 * decryption with `encrypt_key` (AES-256-CBC, key = SHA-256 of the key string), the
 * `X-Lark-Signature` over timestamp + nonce + key + body, and the verification token. The SDK's
 * own adapters answer 200 to a forged request and skip the token, so they are not used.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import * as lark from "@larksuiteoapi/node-sdk";
import type { Logger } from "../../log/logger.js";
import { readBody, sendJson } from "../../server/http.js";

export interface WebhookOptions {
  encryptKey?: string;
  verificationToken?: string;
  logger: Logger;
  /** Hands a decrypted, verified envelope to the event dispatcher; its result is the response body. */
  dispatch(envelope: Record<string, unknown>): Promise<unknown>;
  /** Called for every request refused, with the reason (for status and logs). */
  onRejected?(reason: string): void;
}

class Rejection extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function feishuWebhookHandler(options: WebhookOptions) {
  const cipher = options.encryptKey ? new lark.AESCipher(options.encryptKey) : undefined;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let envelope: Record<string, unknown>;
    try {
      const raw = (await readBody(req)).toString("utf8");
      envelope = open(raw, req, options, cipher);
    } catch (err) {
      const rejection = err instanceof Rejection ? err : new Rejection(400, "unreadable request");
      options.onRejected?.(rejection.message);
      options.logger.warn({ reason: rejection.message }, "feishu webhook request rejected");
      sendJson(res, rejection.status, { code: rejection.status, msg: rejection.message });
      return;
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
  return envelope;
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
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new Rejection(400, problem);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
