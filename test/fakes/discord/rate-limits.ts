/**
 * Discord's REST rate limits as the fake applies them. Every answer carries its bucket's
 * `X-RateLimit-*` headers; a bucket (route + major parameter) that runs out answers 429, and so
 * does the global limit (50 requests a second by default). `rateLimitNext` forces a 429 on the
 * next matching call. Once a 429 was given, any call into that bucket (or any call at all, when
 * global) before its retry time is an early call: it is answered 429 again and recorded, so a
 * test can assert the client waited. `failNext` answers other statuses (5xx, 403, ...).
 */
import { createHash } from "node:crypto";
import { DiscordApiError } from "./validate.js";

/** `"PATCH /channels/:id/messages/*"` (method optional, `:x` or `*` match one segment), a RegExp on `"METHOD /path"`, or a predicate. */
export type CallMatch = string | RegExp | ((call: { method: string; path: string }) => boolean);

export interface RestCall {
  method: string;
  /** Path under `/api/v10`, e.g. `/channels/123/messages`. */
  path: string;
  /** The route template, e.g. `/channels/:channel/messages`. */
  route: string;
  status: number;
  at: number;
  /** Discord's JSON error code, when the call was refused. */
  code?: number;
  body?: unknown;
}

export interface BucketLimit {
  limit: number;
  windowMs: number;
}

export interface RateLimitOptions {
  /** Requests per second across all routes but interactions (Discord: 50). */
  globalPerSecond?: number;
  /** Limit of every route bucket (default 50 per second: generous, so tests are not slowed). */
  bucket?: BucketLimit;
  /** Tighter limits for some routes, first match wins. */
  buckets?: Array<BucketLimit & { match: CallMatch }>;
}

interface Forced {
  match: CallMatch;
  retryAfterMs: number;
  global: boolean;
}

interface Failure {
  match: CallMatch;
  status: number;
  code: number;
  message: string;
  left: number;
}

export interface Verdict {
  headers: Record<string, string>;
  /** Set when the call is refused before it reaches the route. */
  refusal?: { status: number; body: Record<string, unknown> };
}

export function matches(match: CallMatch, method: string, path: string): boolean {
  if (typeof match === "function") return match({ method, path });
  if (match instanceof RegExp) return match.test(`${method} ${path}`);
  const [first, second] = match.trim().split(/\s+/);
  const [m, pattern] = second === undefined ? ["*", first ?? ""] : [first ?? "*", second];
  if (m !== "*" && m.toUpperCase() !== method) return false;
  const want = pattern.split("/").filter(Boolean);
  const got = path.split("?")[0]!.split("/").filter(Boolean);
  return want.length === got.length && want.every((w, i) => w === "*" || w.startsWith(":") || w === got[i]);
}

export class RateLimits {
  readonly early: RestCall[] = [];
  private readonly counts = new Map<string, { used: number; resetAt: number }>();
  private readonly limitedUntil = new Map<string, number>();
  private globalUntil = 0;
  private globalWindow = { used: 0, resetAt: 0 };
  private readonly forced: Forced[] = [];
  private readonly failures: Failure[] = [];

  constructor(private readonly options: RateLimitOptions = {}) {}

  forceNext(match: CallMatch, retryAfterMs: number, global: boolean): void {
    this.forced.push({ match, retryAfterMs, global });
  }

  failNext(match: CallMatch, status: number, code: number, message: string, times: number): void {
    this.failures.push({ match, status, code, message, left: times });
  }

  /** Takes one injected failure for this call, if any. */
  failure(method: string, path: string): DiscordApiError | undefined {
    const f = this.failures.find((x) => x.left > 0 && matches(x.match, method, path));
    if (!f) return undefined;
    f.left--;
    return new DiscordApiError(f.status, f.code, f.message);
  }

  /**
   * Counts the call against its bucket and the global limit; refuses it with 429 when either is
   * spent, when a forced 429 matches, or when an earlier 429 still holds.
   */
  admit(call: RestCall, bucketKey: string, countsGlobal: boolean): Verdict {
    const now = call.at;
    const bucket = this.bucket(call, bucketKey, now);
    const headers = bucketHeaders(call.route, bucket.limit, bucket.state, now);
    const held = Math.max(this.limitedUntil.get(bucketKey) ?? 0, countsGlobal ? this.globalUntil : 0);
    if (held > now) {
      this.early.push(call);
      return this.refuse(headers, held - now, countsGlobal && this.globalUntil > now);
    }
    const forced = this.forced.findIndex((f) => matches(f.match, call.method, call.path));
    if (forced >= 0) {
      const f = this.forced.splice(forced, 1)[0] as Forced;
      this.hold(bucketKey, now + f.retryAfterMs, f.global);
      return this.refuse(headers, f.retryAfterMs, f.global);
    }
    if (countsGlobal) {
      if (this.globalWindow.resetAt <= now) this.globalWindow = { used: 0, resetAt: now + 1000 };
      if (++this.globalWindow.used > (this.options.globalPerSecond ?? 50)) {
        this.hold(bucketKey, this.globalWindow.resetAt, true);
        return this.refuse(headers, this.globalWindow.resetAt - now, true);
      }
    }
    if (++bucket.state.used > bucket.limit.limit) {
      this.hold(bucketKey, bucket.state.resetAt, false);
      return this.refuse(headers, bucket.state.resetAt - now, false);
    }
    return { headers: bucketHeaders(call.route, bucket.limit, bucket.state, now) };
  }

  private bucket(call: RestCall, key: string, now: number) {
    const limit = this.options.buckets?.find((b) => matches(b.match, call.method, call.path)) ??
      this.options.bucket ?? { limit: 50, windowMs: 1000 };
    let state = this.counts.get(key);
    if (!state || state.resetAt <= now) {
      state = { used: 0, resetAt: now + limit.windowMs };
      this.counts.set(key, state);
    }
    return { limit, state };
  }

  private hold(bucketKey: string, until: number, global: boolean): void {
    if (global) this.globalUntil = Math.max(this.globalUntil, until);
    else this.limitedUntil.set(bucketKey, Math.max(this.limitedUntil.get(bucketKey) ?? 0, until));
  }

  private refuse(headers: Record<string, string>, retryMs: number, global: boolean): Verdict {
    const seconds = retryMs / 1000;
    const out: Record<string, string> = {
      ...headers,
      "retry-after": String(Math.max(1, Math.ceil(seconds))),
      "x-ratelimit-scope": global ? "global" : "user",
    };
    if (global) out["x-ratelimit-global"] = "true";
    else {
      out["x-ratelimit-remaining"] = "0";
      out["x-ratelimit-reset-after"] = seconds.toFixed(3);
      out["x-ratelimit-reset"] = ((Date.now() + retryMs) / 1000).toFixed(3);
    }
    const body = { message: "You are being rate limited.", retry_after: Number(seconds.toFixed(3)), global };
    return { headers: out, refusal: { status: 429, body } };
  }
}

function bucketHeaders(route: string, limit: BucketLimit, state: { used: number; resetAt: number }, now: number) {
  return {
    "x-ratelimit-limit": String(limit.limit),
    "x-ratelimit-remaining": String(Math.max(0, limit.limit - state.used)),
    "x-ratelimit-reset": (state.resetAt / 1000).toFixed(3),
    "x-ratelimit-reset-after": (Math.max(0, state.resetAt - now) / 1000).toFixed(3),
    "x-ratelimit-bucket": createHash("sha1").update(route).digest("hex").slice(0, 32),
  };
}
