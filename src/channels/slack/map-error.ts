/**
 * The one place Slack Web API failures become Antler's typed errors. The web client is set to
 * reject rate-limited calls instead of waiting, so the core's retry (which honours
 * `retryAfterMs`) stays the only retry loop.
 */
import {
  ChannelError,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
  TargetUnreachableError,
} from "../../errors.js";

const AUTH_CODES = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "not_allowed_token_type",
]);

const NOT_FOUND_CODES = new Set([
  "message_not_found",
  "channel_not_found",
  "thread_not_found",
  "user_not_found",
  "file_not_found",
  "file_deleted",
]);

/** Slack's answers when the bot may not post to a person or a conversation; retrying will not help. */
const UNREACHABLE_CODES = new Set([
  "user_not_found",
  "channel_not_found",
  "not_in_channel",
  "is_archived",
  "cannot_dm_bot",
  "user_disabled",
]);

/**
 * Calls that post somewhere new or look a target up. Elsewhere (an edit, a stream of a message
 * already posted) a `channel_not_found` means the message is gone, as before.
 */
const TARGET_CALLS = new Set([
  "chat.postMessage",
  "chat.startStream",
  "files.uploadV2",
  "conversations.open",
  "conversations.info",
]);

/** Slack refusing a file for its size (files.getUploadURLExternal, or the upload URL's HTTP 413). */
const FILE_SIZE_CODES = new Set(["file_upload_size_restricted"]);

interface SlackLikeError {
  code?: unknown;
  data?: { error?: unknown };
  retryAfter?: unknown;
  statusCode?: unknown;
  original?: unknown;
  message?: unknown;
}

/** The Slack `error` code of a failed call (`streaming_state_conflict`, …), if it has one. */
export function slackErrorCode(err: unknown): string | undefined {
  if (err instanceof ChannelError && err.cause !== undefined) return slackErrorCode(err.cause);
  const e = err as SlackLikeError | null;
  const code = e?.data?.error;
  return typeof code === "string" ? code : undefined;
}

/** Maps anything a Slack call (`what`, e.g. "chat.postMessage") threw to a typed error naming the channel. */
export function mapSlackError(channel: string, err: unknown, what: string): ChannelError {
  if (err instanceof ChannelError) return err;
  const e = (err ?? {}) as SlackLikeError;
  const where = `${what}: `;
  if (e.code === "slack_webapi_rate_limited_error") {
    const seconds = typeof e.retryAfter === "number" ? e.retryAfter : 1;
    return new PlatformRateLimitError(channel, Math.max(0, seconds) * 1000, `${where}Slack rate limit`, { cause: err });
  }
  const code = slackErrorCode(err);
  if (code !== undefined) {
    if (code === "ratelimited") return new PlatformRateLimitError(channel, 1000, `${where}Slack rate limit`, { cause: err });
    if (AUTH_CODES.has(code)) {
      return new PlatformAuthError(channel, `${where}Slack rejected the token (${code}): check channels.${channel}.bot_token`, {
        cause: err,
      });
    }
    if (code === "missing_scope" || code === "no_permission") {
      return new ChannelError(channel, "forbidden", `${where}${code}: add the scope to the Slack app and reinstall it`, {
        cause: err,
      });
    }
    if (UNREACHABLE_CODES.has(code) && TARGET_CALLS.has(what)) {
      return new TargetUnreachableError(channel, `${where}${code}`, { cause: err });
    }
    if (NOT_FOUND_CODES.has(code)) return new PlatformNotFoundError(channel, `${where}${code}`, { cause: err });
    if (FILE_SIZE_CODES.has(code))
      return new ChannelError(channel, "content_rejected", `${where}Slack refused the file as too large (${code})`, {
        cause: err,
      });
    return new ChannelError(channel, "platform_error", `${where}Slack error ${code}`, { cause: err });
  }
  if (e.code === "slack_webapi_http_error" && e.statusCode === 413) {
    return new ChannelError(channel, "content_rejected", `${where}Slack refused the file as too large (HTTP 413)`, {
      cause: err,
    });
  }
  if (e.code === "slack_webapi_http_error") {
    return new ChannelError(channel, "platform_unavailable", `${where}Slack answered HTTP ${String(e.statusCode)}`, {
      cause: err,
    });
  }
  if (e.code === "slack_webapi_request_error") {
    const detail = e.original instanceof Error ? e.original.message : "request failed";
    return new ChannelError(channel, "network", `${where}cannot reach Slack: ${detail}`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ChannelError(channel, "platform_error", `${where}${message}`, { cause: err });
}

/**
 * Why a file download (`GET url_private_download`) failed, or undefined when it did not. Slack
 * answers a request it will not serve with its HTML sign-in page and status 200, so an HTML
 * answer for a file that is not HTML counts as a refusal of the token.
 */
export function slackDownloadError(
  channel: string,
  status: number,
  contentType: string | null,
  expectedMime: string | undefined,
): ChannelError | undefined {
  const where = "downloading a Slack file";
  if (status === 404 || status === 410) return new PlatformNotFoundError(channel, `${where}: HTTP ${status}`);
  if (status === 401 || status === 403)
    return new PlatformAuthError(
      channel,
      `${where}: HTTP ${status}: check channels.${channel}.bot_token and the files:read scope`,
    );
  if (status >= 500) return new ChannelError(channel, "platform_unavailable", `${where}: Slack answered HTTP ${status}`);
  if (status < 200 || status >= 300) return new ChannelError(channel, "platform_error", `${where}: HTTP ${status}`);
  const html = (contentType ?? "").toLowerCase().startsWith("text/html");
  if (html && !(expectedMime ?? "").toLowerCase().startsWith("text/html")) {
    return new ChannelError(
      channel,
      "forbidden",
      `${where}: Slack answered its sign-in page instead of the file; the bot token needs the files:read scope`,
    );
  }
  return undefined;
}
