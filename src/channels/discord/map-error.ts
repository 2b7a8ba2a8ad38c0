/**
 * The one place Discord failures become Antler's typed errors. The REST client is set to reject
 * rate-limited calls instead of waiting them out, so the core's retry (which honours
 * `retryAfterMs`, shared by every reply on the channel) stays the only retry loop.
 */
import { DiscordAPIError, HTTPError, RateLimitError } from "discord.js";
import {
  ChannelError,
  FileTooLargeError,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
  TargetUnreachableError,
} from "../../errors.js";
import { MAX_UPLOAD_BYTES } from "./files.js";

/** JSON error codes of Discord's REST API that the adapter acts on. */
export const DiscordCode = {
  UnknownChannel: 10003,
  UnknownMessage: 10008,
  UnknownInteraction: 10062,
  UnknownUser: 10013,
  MissingAccess: 50001,
  CannotMessageUser: 50007,
  CannotSendEmptyMessage: 50006,
  MissingPermissions: 50013,
  RequestEntityTooLarge: 40005,
  InvalidFormBody: 50035,
  InteractionAlreadyAcknowledged: 40060,
  ThreadAlreadyCreated: 160004,
} as const;

const NOT_FOUND = new Set<number>([10003, 10008, 10062]);
const FORBIDDEN = new Set<number>([50001, 50013, 50024]);

/** The JSON error code of a failed REST call, if it has one. */
export function discordErrorCode(err: unknown): number | undefined {
  if (err instanceof ChannelError && err.cause !== undefined) return discordErrorCode(err.cause);
  return err instanceof DiscordAPIError && typeof err.code === "number" ? err.code : undefined;
}

/** Maps anything a discord.js call (`what`, e.g. "POST /channels/:id/messages") threw to a typed error naming the channel. */
export function mapDiscordError(channel: string, err: unknown, what: string): ChannelError {
  if (err instanceof ChannelError) return err;
  const where = `${what}: `;
  if (err instanceof RateLimitError) {
    const ms = Math.max(err.retryAfter, err.timeToReset, 0);
    const scope = err.global ? "global rate limit" : `rate limit on ${err.route}`;
    return new PlatformRateLimitError(channel, Math.ceil(ms), `${where}Discord ${scope}`, { cause: err });
  }
  if (err instanceof DiscordAPIError) {
    const code = typeof err.code === "number" ? err.code : 0;
    const detail = `Discord ${err.status} (code ${code}): ${err.message}`;
    if (err.status === 401) {
      return new PlatformAuthError(channel, `${where}Discord rejected the bot token: check channels.${channel}.bot_token`, {
        cause: err,
      });
    }
    if (err.status === 429) return new PlatformRateLimitError(channel, 1000, `${where}Discord rate limit`, { cause: err });
    if (err.status === 413 || code === DiscordCode.RequestEntityTooLarge) return tooLarge(channel, err);
    // The user's privacy settings refuse DMs from this bot (or they share no server with it).
    if (code === DiscordCode.CannotMessageUser) return new TargetUnreachableError(channel, `${where}${detail}`, { cause: err });
    if (NOT_FOUND.has(code) || err.status === 404) return new PlatformNotFoundError(channel, `${where}${detail}`, { cause: err });
    if (FORBIDDEN.has(code) || err.status === 403) {
      return new ChannelError(
        channel,
        "forbidden",
        `${where}${detail}: give the bot View Channel, Send Messages, Send Messages in Threads and Create Public Threads there`,
        { cause: err },
      );
    }
    if (err.status === 400) return new ChannelError(channel, "content_rejected", `${where}${detail}`, { cause: err });
    return new ChannelError(channel, "platform_error", `${where}${detail}`, { cause: err });
  }
  if (err instanceof HTTPError) {
    if (err.status === 413) return tooLarge(channel, err);
    return new ChannelError(channel, "platform_unavailable", `${where}Discord answered HTTP ${err.status}`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  const name = err instanceof Error ? err.name : "";
  const code = (err as { code?: unknown } | null)?.code;
  if (code === "TokenInvalid") {
    return new PlatformAuthError(
      channel,
      `${where}Discord rejected the bot token (401): copy it again from the Developer Portal (Bot → Reset Token) into channels.${channel}.bot_token`,
      { cause: err },
    );
  }
  if (name === "AbortError" || /timed? ?out/i.test(message)) {
    return new ChannelError(channel, "timeout", `${where}Discord did not answer in time`, { cause: err });
  }
  if (/fetch failed|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|socket/i.test(message)) {
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    return new ChannelError(channel, "network", `${where}cannot reach Discord: ${cause ?? message}`, { cause: err });
  }
  return new ChannelError(channel, "platform_error", `${where}${message}`, { cause: err });
}

/** An upload over the limit (413, code 40005): the limit of a server without boosts, which is what Antler counts on. */
function tooLarge(channel: string, err: unknown): FileTooLargeError {
  return new FileTooLargeError(channel, MAX_UPLOAD_BYTES, undefined, { cause: err });
}

/** Why the Gateway closed for good, in words an operator can act on; undefined for codes that reconnect. */
export function gatewayCloseProblem(channel: string, code: number): ChannelError | undefined {
  switch (code) {
    case 4004:
      return new PlatformAuthError(
        channel,
        `the Gateway refused the bot token (close 4004, authentication failed): it was reset or revoked; copy the new one from the Developer Portal (Bot → Reset Token) into channels.${channel}.bot_token`,
      );
    case 4014:
      return new ChannelError(
        channel,
        "forbidden",
        "the Gateway refused a privileged intent (close 4014, disallowed intents): turn on Message Content Intent in the Developer Portal (Bot → Privileged Gateway Intents), then restart the channel",
      );
    case 4013:
      return new ChannelError(channel, "config_invalid", "the Gateway refused the intents (close 4013, invalid intents)");
    case 4010:
    case 4011:
    case 4012:
      return new ChannelError(channel, "platform_error", `the Gateway closed the connection for good (close ${code})`);
    default:
      return undefined;
  }
}
