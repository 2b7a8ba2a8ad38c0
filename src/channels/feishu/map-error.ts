/**
 * The one place where Feishu failures become Antler's typed errors. The SDK (axios) throws on
 * non-2xx answers and resolves with `{code, msg}` on 2xx business errors; both end up here.
 */
import {
  ChannelError,
  errorMessage,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
  TargetUnreachableError,
} from "../../errors.js";

/** Open Platform codes that mean "slow down". */
const RATE_LIMIT_CODES = new Set([99991400, 230020, 11232, 11233]);
/** Codes that mean the app's credentials or token are bad; a restart will not help. */
const AUTH_CODES = new Set([10003, 10014, 99991661, 99991663, 99991664, 99991665, 99991668, 99991672]);
/** The message is gone (recalled or deleted), or holds no such file. */
const NOT_FOUND_CODES = new Set([230011, 231003, 234003]);
/**
 * The bot cannot post there: not in the group (230002), the person is outside the bot's
 * availability (230013), the chat is gone (230045), or a chat lookup was refused: invalid
 * chat_id (232006), another tenant's chat (232010), not a member (232011), the app is not
 * enabled in that tenant (232034).
 */
const UNREACHABLE_CODES = new Set([230002, 230013, 230045, 232006, 232010, 232011, 232034]);
/** A file the platform will not take or hand out: too large (234006, 234037), empty (234010), not an image it reads (234011). */
const FILE_REFUSED_CODES = new Set([234006, 234010, 234011, 234037]);

/** Business error from a 2xx body with `code != 0`. */
export class FeishuApiError extends Error {
  constructor(
    readonly status: number,
    readonly feishuCode: number,
    readonly msg: string,
    readonly headers: Record<string, unknown> = {},
  ) {
    super(`code ${feishuCode}: ${msg}`);
  }
}

interface AxiosLike {
  isAxiosError?: boolean;
  response?: { status: number; data?: unknown; headers?: Record<string, unknown> };
  code?: string;
  message: string;
}

/** Throws when an SDK result is a business error; returns it otherwise. */
export function ensureOk<T>(result: T): T {
  const body = result as { code?: unknown; msg?: unknown } | undefined;
  if (body && typeof body.code === "number" && body.code !== 0) {
    throw new FeishuApiError(200, body.code, String(body.msg ?? ""));
  }
  return result;
}

/** Maps any failure of a Feishu call (`what`, e.g. "reply") to a typed error naming the channel. */
export function mapFeishuError(channel: string, err: unknown, what: string): ChannelError {
  if (err instanceof ChannelError) return err;
  const detail = describe(err);
  if (!detail) return new ChannelError(channel, "network", `${what} failed: ${errorMessage(err)}`, { cause: err });
  const { status, code, msg, headers } = detail;
  const text = `${what} failed: ${code !== undefined ? `code ${code}` : `HTTP ${status}`}${msg ? ` ${msg}` : ""}`;
  if (status === 429 || (code !== undefined && RATE_LIMIT_CODES.has(code))) {
    return new PlatformRateLimitError(channel, retryAfterMs(headers), text, { cause: err });
  }
  if (status === 401 || (code !== undefined && AUTH_CODES.has(code))) {
    return new PlatformAuthError(channel, `${text}: check channels.${channel}.app_id and app_secret`, { cause: err });
  }
  // 230001 is any bad parameter; only a bad receive_id means the person or chat is out of reach.
  if (code !== undefined && (UNREACHABLE_CODES.has(code) || (code === 230001 && /receive_id/i.test(msg ?? "")))) {
    return new TargetUnreachableError(channel, text, { cause: err });
  }
  if (status === 404 || (code !== undefined && NOT_FOUND_CODES.has(code))) {
    return new PlatformNotFoundError(channel, text, { cause: err });
  }
  if (code !== undefined && FILE_REFUSED_CODES.has(code))
    return new ChannelError(channel, "content_rejected", text, { cause: err });
  const kind = status >= 500 ? "platform_unavailable" : "platform_error";
  return new ChannelError(channel, kind, text, { cause: err });
}

function describe(err: unknown): { status: number; code?: number; msg?: string; headers: Record<string, unknown> } | undefined {
  if (err instanceof FeishuApiError) return { status: err.status, code: err.feishuCode, msg: err.msg, headers: err.headers };
  // The SDK's token manager throws a plain Error for a refused token request.
  const token = err instanceof Error ? /failed to get \w+, code: (\d+), msg: (.*)$/.exec(err.message) : null;
  if (token) return { status: 200, code: Number(token[1]), msg: token[2] ?? "", headers: {} };
  const ax = err as AxiosLike;
  if (!ax || typeof ax !== "object" || !ax.response) return undefined;
  const data = ax.response.data as { code?: unknown; msg?: unknown } | undefined;
  return {
    status: ax.response.status,
    code: typeof data?.code === "number" ? data.code : undefined,
    msg: typeof data?.msg === "string" ? data.msg : undefined,
    headers: ax.response.headers ?? {},
  };
}

/** `x-ogw-ratelimit-reset` is in seconds; without it, wait one second. */
function retryAfterMs(headers: Record<string, unknown>): number {
  const raw = headers["x-ogw-ratelimit-reset"] ?? headers["retry-after"];
  const seconds = Number(raw);
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds * 1000) : 1000;
}
