/**
 * What DingTalk sends is checked before it is read: an HTTP callback's signature (HMAC-SHA256
 * over the timestamp and the app secret, within an hour), and the shape of a robot message,
 * whether it came by callback or on the stream, so inbound.ts can read it unchecked. A callback
 * that fails either is refused with a 4xx, never a 500 that DingTalk would redeliver; a frame
 * that fails the shape is ignored.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Why `data` cannot be a robot message, or undefined when it has what a translation needs: a
 * signed request or a frame can still carry anything, and an event without `msgId` cannot be
 * deduped or recorded.
 */
export function robotMessageProblem(data: unknown): string | undefined {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return "the body is not a JSON object";
  const msg = data as Record<string, unknown>;
  for (const key of ["msgId", "conversationId", "senderId"] as const) {
    if (typeof msg[key] !== "string" || msg[key] === "") return `${key} is missing`;
  }
  if (typeof msg.msgtype !== "string") return "msgtype is missing";
  for (const key of ["text", "content"] as const) {
    const value = msg[key];
    if (value !== undefined && (typeof value !== "object" || value === null || Array.isArray(value)))
      return `${key} is not an object`;
  }
  const richText = (msg.content as { richText?: unknown } | undefined)?.richText;
  if (richText !== undefined && !(Array.isArray(richText) && richText.every((p) => typeof p === "object" && p !== null))) {
    return "content.richText is not a list of objects";
  }
  return undefined;
}

/** Largest accepted difference between a callback's timestamp and our clock. */
export const SIGNATURE_WINDOW_MS = 60 * 60_000;

/** `base64(HMAC_SHA256(secret, timestamp + "\n" + secret))`, as DingTalk signs HTTP callbacks. */
export function callbackSignature(secret: string, timestamp: string): string {
  return createHmac("sha256", secret).update(`${timestamp}\n${secret}`).digest("base64");
}

/** Why a callback's signature is not acceptable, or undefined when it is. */
export function signatureProblem(secret: string, timestamp: string | undefined, sign: string | undefined, now = Date.now()) {
  if (!timestamp || !sign) return "missing timestamp or sign header";
  const ts = Number(timestamp);
  if (!Number.isFinite(ts) || Math.abs(now - ts) > SIGNATURE_WINDOW_MS) return "timestamp outside the 1-hour window";
  const want = Buffer.from(callbackSignature(secret, timestamp));
  const got = Buffer.from(sign);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return "bad signature";
  return undefined;
}
