/** The one place Telegram failures become Antler's typed errors. */
import { TelegramError } from "telegraf";
import {
  ChannelError,
  errorMessage,
  FileTooLargeError,
  NotModifiedError,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
  TargetUnreachableError,
} from "../../errors.js";
import { DOWNLOAD_LIMIT, PHOTO_LIMIT, UPLOAD_LIMIT } from "./attachments.js";

/** Telegram's description when our HTML is malformed; the caller resends as plain text. */
export function isParseError(err: unknown): boolean {
  return err instanceof TelegramError && err.code === 400 && /can't parse entities/i.test(err.description);
}

/**
 * Telegram's refusals that mean the bot may not post to that chat or person (a user who never
 * started it or blocked it, a group it left or may not write in, a topic that is gone).
 */
const UNREACHABLE =
  /bot can't initiate conversation|bot was blocked by the user|user is deactivated|bot was kicked|bot is not a member|have no rights to send|not enough rights to send|message thread not found/i;

/** The Bot API URL carries the token (`/bot<token>/<method>`); this hides it in any text. */
export function redactToken(text: string): string {
  return text.replace(/\/bot[^/\s]+\//g, "/bot<redacted>/");
}

/** Maps anything a Telegram call (`method`, e.g. "sendMessage") threw to a typed error naming the channel. */
export function mapTelegramError(channel: string, err: unknown, method: string): ChannelError {
  if (err instanceof ChannelError) return err;
  // node-fetch puts the request URL, token included, in some messages (e.g. "invalid json
  // response body at …" when a proxy answers HTML). Telegraf redacts only failed requests and
  // only tokens shaped like "<digits>:…". The error is kept as the cause, which loggers print,
  // so it is cleaned in place too.
  if (err instanceof Error) err.message = redactToken(err.message);
  if (!(err instanceof TelegramError)) {
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
  if ((code === 400 || code === 403) && UNREACHABLE.test(description)) {
    return new TargetUnreachableError(channel, `${method}: ${description}`, { cause: err });
  }
  // getChat asks whether the bot may reach a chat at all (sending first): "chat not found" there
  // means a user who never started the bot, or a group the bot is not in.
  if (code === 400 && method === "getChat" && /chat not found/i.test(description)) {
    return new TargetUnreachableError(
      channel,
      `${method}: ${description} (a user must start the bot first; a group must have the bot as a member)`,
      { cause: err },
    );
  }
  const tooLarge = fileTooLarge(channel, err, method);
  if (tooLarge) return tooLarge;
  if (
    code === 400 &&
    /(message to edit not found|message to delete not found|chat not found|message not found|invalid file_id|wrong file identifier)/i.test(
      description,
    )
  ) {
    return new PlatformNotFoundError(channel, `${method}: ${description}`, { cause: err });
  }
  if (code === 403) return new ChannelError(channel, "forbidden", `${method}: ${description}`, { cause: err });
  if (code >= 500) return new ChannelError(channel, "platform_unavailable", `${method}: ${code} ${description}`, { cause: err });
  return new ChannelError(channel, "platform_error", `${method}: ${code} ${description}`, { cause: err });
}

/**
 * Telegram's size refusals: getFile's 400 "file is too big" (past the 20 MB a bot may
 * download), a 413 on an upload (past 50 MB), and sendPhoto's 400 for a photo past 10 MB.
 */
function fileTooLarge(channel: string, err: TelegramError, method: string): FileTooLargeError | undefined {
  const { code, description } = err;
  if (code === 400 && /file is too big/i.test(description))
    return new FileTooLargeError(channel, DOWNLOAD_LIMIT, undefined, { cause: err });
  if (code === 413)
    return new FileTooLargeError(channel, method === "sendPhoto" ? PHOTO_LIMIT : UPLOAD_LIMIT, undefined, { cause: err });
  if (code === 400 && method === "sendPhoto" && /PHOTO_SAVE_FILE_INVALID/.test(description)) {
    return new FileTooLargeError(channel, PHOTO_LIMIT, undefined, { cause: err });
  }
  return undefined;
}
