/**
 * How Feishu posts events to a request URL: with an encrypt key the JSON is AES-256-CBC
 * encrypted (key = SHA-256 of the key string, random IV in front, base64) and signed with
 * sha256(timestamp + nonce + key + body). The body is compact JSON, as the platform sends it.
 */
import { createCipheriv, createHash, randomBytes } from "node:crypto";

export interface WebhookSendOptions {
  encryptKey?: string;
  /** Sign with the wrong key. */
  badSignature?: boolean;
  /** Flip bytes of the ciphertext so it cannot be decrypted. */
  corrupt?: boolean;
  /** Leave the signature headers off. */
  unsigned?: boolean;
  /** Sign with this X-Lark-Request-Timestamp (seconds) instead of now. */
  timestamp?: number;
}

export interface WebhookResult {
  status: number;
  body: unknown;
  ms: number;
}

export function encryptPayload(encryptKey: string, plain: string): string {
  const key = createHash("sha256").update(encryptKey).digest();
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-256-cbc", key, iv);
  return Buffer.concat([iv, cipher.update(plain, "utf8"), cipher.final()]).toString("base64");
}

export function signature(timestamp: string, nonce: string, encryptKey: string, body: string): string {
  return createHash("sha256")
    .update(timestamp + nonce + encryptKey + body)
    .digest("hex");
}

export async function sendWebhook(target: string, payload: unknown, options: WebhookSendOptions = {}): Promise<WebhookResult> {
  let body = JSON.stringify(payload);
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (options.encryptKey) {
    let encrypted = encryptPayload(options.encryptKey, body);
    if (options.corrupt) {
      const bytes = Buffer.from(encrypted, "base64");
      for (let i = 16; i < bytes.length; i++) bytes[i] = (bytes[i] as number) ^ 0x5a;
      encrypted = bytes.toString("base64");
    }
    body = JSON.stringify({ encrypt: encrypted });
    if (!options.unsigned) {
      const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
      const nonce = randomBytes(8).toString("hex");
      const key = options.badSignature ? `${options.encryptKey}x` : options.encryptKey;
      headers["X-Lark-Request-Timestamp"] = timestamp;
      headers["X-Lark-Request-Nonce"] = nonce;
      headers["X-Lark-Signature"] = signature(timestamp, nonce, key, body);
    }
  }
  const started = Date.now();
  const res = await fetch(target, { method: "POST", headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: res.status, body: parsed, ms: Date.now() - started };
}
