/**
 * The one place the relay's failures become Antler's typed errors, so the core does the same as
 * for every platform: waits out a 429 on every reply at once, ignores an unchanged edit, gives up
 * on a message that is gone, and labels the rest with one code from the closed list.
 */
import {
  ChannelError,
  errorMessage,
  NotModifiedError,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
} from "antler/channel";
import { RelayRefusal } from "./transport.js";

export function mapRelayError(channel: string, err: unknown, what: string): ChannelError {
  if (err instanceof ChannelError) return err;
  if (!(err instanceof RelayRefusal)) {
    return new ChannelError(channel, "network", `${what} failed: ${errorMessage(err)}`, { cause: err });
  }
  const message = `${what} failed: ${err.message}`;
  if (err.status === 429) return new PlatformRateLimitError(channel, (err.retryAfterS ?? 1) * 1000, message, { cause: err });
  if (err.status === 401 || err.status === 403) return new PlatformAuthError(channel, message, { cause: err });
  if (err.status === 404) return new PlatformNotFoundError(channel, message, { cause: err });
  // The relay answers an edit that changes nothing with 409.
  if (err.status === 409) return new NotModifiedError(channel, { cause: err });
  const code = err.status >= 500 ? "platform_unavailable" : "platform_error";
  return new ChannelError(channel, code, message, { cause: err });
}
