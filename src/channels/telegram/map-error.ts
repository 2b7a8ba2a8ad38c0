/** The one place Telegram failures become Antler's typed errors. */
import { TelegramError } from "telegraf";
import {
  ChannelError,
  errorMessage,
  NotModifiedError,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
} from "../../errors.js";

/** Telegram's description when our HTML is malformed; the caller resends as plain text. */
export function isParseError(err: unknown): boolean {
  return err instanceof TelegramError && err.code === 400 && /can't parse entities/i.test(err.description);
}

/** The Bot API URL carries the token (`/bot<token>/<method>`); this hides it in any text. */
export function redactToken(text: string): string {
  return text.replace(/\/bot[^/\s]+\//g, "/bot<redacted>/");
}

export function mapTelegramError(channel: string, err: unknown, method: string): Error {
  if (err instanceof ChannelError) return err;
  // node-fetch puts the request URL, token included, in some messages (e.g. "invalid json
  // response body at …" when a proxy answers HTML). Telegraf redacts only failed requests and
  // only tokens shaped like "<digits>:…". The error is kept as the cause, which loggers print,
  // so it is cleaned in place too.
  if (err instanceof Error) err.message = redactToken(err.message);
  if (!(err instanceof TelegramError)) {
    if (err instanceof Error && err.name === "AbortError") return err;
    return new ChannelError(channel, "network", `${method} failed: ${errorMessage(err)}`, { cause: err });
  }
  const { code, description } = err;
  if (code === 429) {
    const seconds = err.parameters?.retry_after ?? 1;
    return new PlatformRateLimitError(channel, seconds * 1000, `${method}: ${description}`, { cause: err });
  }
  if (code === 401 || code === 404) {
    // The Bot API answers 404 "Not Found" for a malformed token, 401 for a revoked one.
    return new PlatformAuthError(
      channel,
      `${method}: Telegram rejected the bot token (${code} ${description}): check channels.${channel}.bot_token`,
      { cause: err },
    );
  }
  if (code === 400 && /message is not modified/i.test(description)) return new NotModifiedError(channel, { cause: err });
  if (
    code === 400 &&
    /(message to edit not found|message to delete not found|chat not found|message not found)/i.test(description)
  ) {
    return new PlatformNotFoundError(channel, `${method}: ${description}`, { cause: err });
  }
  if (code === 403) return new ChannelError(channel, "forbidden", `${method}: ${description}`, { cause: err });
  if (code >= 500) return new ChannelError(channel, "platform_unavailable", `${method}: ${code} ${description}`, { cause: err });
  return new ChannelError(channel, "platform_error", `${method}: ${code} ${description}`, { cause: err });
}
