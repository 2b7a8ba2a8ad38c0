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

/** A failure inside one channel adapter; names the channel. */
export class ChannelError extends AntlerError {
  readonly channel: string;

  constructor(channel: string, code: string, message: string, options: AntlerErrorOptions = {}) {
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

/** An edit was refused because the content did not change. Callers treat it as success. */
export class NotModifiedError extends ChannelError {
  constructor(channel: string, options: AntlerErrorOptions = {}) {
    super(channel, "not_modified", "message is not modified", options);
  }
}

/** An optional channel capability was called on a channel that lacks it. */
export class NotImplementedError extends AntlerError {
  constructor(what: string) {
    super("not_implemented", `${what} is not implemented`);
  }
}

/** Text of an unknown thrown value, for logs and notices. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === "string" ? err : JSON.stringify(err);
}
