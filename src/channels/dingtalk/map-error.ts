/**
 * The one place DingTalk failures become Antler's typed errors: OpenAPI answers (new-style
 * `code` strings), old-style `{errcode}` answers of oapi and sessionWebhooks, and the stream
 * gateway's.
 */
import {
  ChannelError,
  errorMessage,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
  TargetUnreachableError,
} from "../../errors.js";

/** The QPS limits are per second: one second is the shortest wait that can help. */
const QPS_RETRY_MS = 1000;
/** The sessionWebhook allows about 20 messages a minute per robot; back off a few seconds. */
const WEBHOOK_RETRY_MS = 3000;

/** sessionWebhook errcode when the session behind the webhook is gone ("session 不存在"). */
const ERRCODE_SESSION_GONE = 300001;
/** sessionWebhook errcode "send too fast". */
const ERRCODE_SEND_TOO_FAST = 130101;
/** oapi errcodes of an invalid or expired access_token (answered with HTTP 200). */
const ERRCODES_BAD_TOKEN = new Set([40014, 42001]);
/** oapi media errcodes: bad media type, bad file type, bad file size. */
const ERRCODES_MEDIA_REJECTED = new Set([40004, 40005, 40006]);

/**
 * OpenAPI codes that say the robot cannot post there: an unknown group, a robot that is not in
 * it or was stopped, a card space (group or person) that does not exist.
 */
const UNREACHABLE_CODES = new Set([
  "invalid.openConversationId",
  "invalidParameter.robotCode.notExsit",
  "bot.stopped",
  "param.openSpaceIdInvalid",
]);

/** What a failed call looked like on the wire. */
export interface DingTalkFailure {
  /** HTTP status (200 for old-style `{errcode}` failures). */
  status: number;
  /** New-style error code, e.g. `Forbidden.AccessDenied.QpsLimitForApi`. */
  code?: string;
  /** Old-style numeric errcode (oapi and sessionWebhook). */
  errcode?: number;
  message?: string;
  /** `Retry-After` header, seconds, when present. */
  retryAfter?: string | null;
}

/**
 * Maps one failed call (`what`, e.g. "send") to Antler's typed errors: `err` is what the wire
 * showed (a {@link DingTalkFailure}), an error already typed, or anything else thrown (network).
 */
export function mapDingTalkError(channel: string, err: unknown, what: string): ChannelError {
  if (err instanceof ChannelError) return err;
  if (!isFailure(err)) return new ChannelError(channel, "network", `${what} failed: ${errorMessage(err)}`, { cause: err });
  const f = err;
  const detail = `${what} failed: ${[f.status, f.code ?? f.errcode, f.message].filter((x) => x !== undefined && x !== "").join(" ")}`;
  if (f.code?.includes("QpsLimit") || f.status === 429) {
    const header = Number(f.retryAfter);
    const wait = Number.isFinite(header) && header > 0 ? header * 1000 : QPS_RETRY_MS;
    return new PlatformRateLimitError(channel, wait, detail);
  }
  if (f.errcode === ERRCODE_SEND_TOO_FAST) return new PlatformRateLimitError(channel, WEBHOOK_RETRY_MS, detail);
  if (
    f.status === 401 ||
    f.code === "InvalidAuthentication" ||
    /invalid.*(secret|token|client)/i.test(f.code ?? "") ||
    (f.errcode !== undefined && ERRCODES_BAD_TOKEN.has(f.errcode))
  ) {
    return new PlatformAuthError(channel, detail);
  }
  if (f.code !== undefined && UNREACHABLE_CODES.has(f.code)) return new TargetUnreachableError(channel, detail);
  if (f.errcode !== undefined && ERRCODES_MEDIA_REJECTED.has(f.errcode)) {
    return new ChannelError(channel, "content_rejected", detail);
  }
  if (f.status === 404 || f.errcode === ERRCODE_SESSION_GONE || /notfound|not_exist/i.test(f.code ?? "")) {
    return new PlatformNotFoundError(channel, detail);
  }
  return new ChannelError(channel, "platform_error", detail);
}

function isFailure(err: unknown): err is DingTalkFailure {
  return (
    typeof err === "object" && err !== null && !(err instanceof Error) && typeof (err as DingTalkFailure).status === "number"
  );
}
