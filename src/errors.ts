/**
 * Antler's typed errors. Each failure kind has one class with a stable `code`, so callers
 * branch on the type and logs carry a machine-readable reason. Chat users see a short
 * message; the full error (with its cause chain) goes to the log.
 */

export interface AntlerErrorOptions {
  cause?: unknown;
}

/** Base of every error Antler throws on purpose. */
export class AntlerError extends Error {
  /** Stable, machine-readable reason, e.g. `config_invalid`. */
  readonly code: string;

  constructor(code: string, message: string, options: AntlerErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
  }
}

/** One problem in the configuration, tied to the key path that caused it. */
export interface ConfigIssue {
  /** Dotted key path, e.g. `channels.slack.bot_token`; empty for the whole file. */
  path: string;
  /** What is wrong and how to fix it, in one line. */
  message: string;
}

/** The configuration could not be read or is invalid. Carries every problem found. */
export class ConfigError extends AntlerError {
  readonly issues: ConfigIssue[];

  constructor(issues: ConfigIssue[], options: AntlerErrorOptions = {}) {
    super("config_invalid", formatIssues(issues), options);
    this.issues = issues;
  }
}

function formatIssues(issues: ConfigIssue[]): string {
  return issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("\n");
}

/** A `"module:Export"` path could not be resolved to the value the caller expected. */
export class ReflectionError extends AntlerError {}

/**
 * Why a channel operation failed. One closed list for every adapter, so the same failure gets
 * the same metric label and log code whichever platform it happened on.
 */
export type ChannelErrorCode =
  /** A config key the channel needs is missing. */
  | "config_missing"
  /** A config value cannot work (e.g. not a URL). */
  | "config_invalid"
  /** The platform rejected the credentials. */
  | "auth_failed"
  /** The credentials work but lack a permission or scope for this call. */
  | "forbidden"
  /** The platform asked us to slow down. */
  | "rate_limited"
  /** The message or chat is gone. */
  | "not_found"
  /** An edit changed nothing. */
  | "not_modified"
  /** The platform (or this configuration of it) cannot do what was asked. */
  | "not_supported"
  /** What we asked to post breaks a platform rule (e.g. a button id too long). */
  | "content_rejected"
  /** The platform could not be reached (DNS, refused connection, reset socket). */
  | "network"
  /** The platform answered with a 5xx. */
  | "platform_unavailable"
  /** The platform refused the call for another reason; the message says which. */
  | "platform_error"
  /** The call took too long. */
  | "timeout"
  /** The channel is not running. */
  | "not_started"
  /** stop() was called while start() was under way. */
  | "stopped"
  /** Another channel already holds a webhook path this one needs. */
  | "route_conflict"
  /** The bot cannot post to this chat or person (never started the bot, closed DMs, not a member). */
  | "unreachable";

/** A failure inside one channel adapter; names the channel. */
export class ChannelError extends AntlerError {
  readonly channel: string;
  declare readonly code: ChannelErrorCode;

  constructor(channel: string, code: ChannelErrorCode, message: string, options: AntlerErrorOptions = {}) {
    super(code, `[${channel}] ${message}`, options);
    this.channel = channel;
  }
}

/** The platform asked us to slow down. `retryAfterMs` is how long to wait before the next call. */
export class PlatformRateLimitError extends ChannelError {
  readonly retryAfterMs: number;

  constructor(channel: string, retryAfterMs: number, message = "rate limited", options: AntlerErrorOptions = {}) {
    super(channel, "rate_limited", `${message} (retry after ${retryAfterMs} ms)`, options);
    this.retryAfterMs = retryAfterMs;
  }
}

/** The platform rejected our credentials. Restarting will not help until config changes. */
export class PlatformAuthError extends ChannelError {
  constructor(channel: string, message: string, options: AntlerErrorOptions = {}) {
    super(channel, "auth_failed", message, options);
  }
}

/** The target (message, chat) does not exist any more. */
export class PlatformNotFoundError extends ChannelError {
  constructor(channel: string, message: string, options: AntlerErrorOptions = {}) {
    super(channel, "not_found", message, options);
  }
}

/**
 * The bot cannot post where it was asked to: a user who never started it, DMs closed, a chat it
 * is not in. The message carries the platform's reason; retrying will not help.
 */
export class TargetUnreachableError extends ChannelError {
  constructor(channel: string, message: string, options: AntlerErrorOptions = {}) {
    super(channel, "unreachable", message, options);
  }
}

/** An edit was refused because the content did not change. Callers treat it as success. */
export class NotModifiedError extends ChannelError {
  constructor(channel: string, options: AntlerErrorOptions = {}) {
    super(channel, "not_modified", "message is not modified", options);
  }
}

/** A file is larger than the limit it was read or uploaded under; nothing of it was kept. */
export class FileTooLargeError extends ChannelError {
  readonly maxBytes: number;
  /** The file's size when known (the platform said so, or the read went past the limit). */
  readonly size: number | undefined;

  constructor(channel: string, maxBytes: number, size?: number, options: AntlerErrorOptions = {}) {
    const what = size === undefined ? "the file is larger" : `the file has ${size} bytes, more`;
    super(channel, "content_rejected", `${what} than the limit of ${maxBytes} bytes`, options);
    this.maxBytes = maxBytes;
    this.size = size;
  }
}

/** Text of an unknown thrown value, for logs and notices. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === "string" ? err : JSON.stringify(err);
}
