/**
 * Logging: pino, JSON by default and pretty on a TTY (one line per entry, as in JSON). Secrets are removed twice: pino's
 * `redact` blanks secret-bearing keys in logged objects, and a scrubbing stream replaces every
 * configured secret value wherever it appears in a line (an error message, a URL, …).
 */
import { createRequire } from "node:module";
import pino, { type DestinationStream, type Logger } from "pino";
import type pinoPretty from "pino-pretty";

export type { Logger } from "pino";

export interface LoggerOptions {
  level?: string;
  /** `auto` is pretty on a TTY and JSON otherwise. */
  format?: "auto" | "json" | "pretty";
  /** Values that must never be written, whatever key or message they hide in. */
  secrets?: readonly string[];
  /** Where lines go; stdout by default. Tests pass a collector (a writable stream when `format` is pretty). */
  destination?: DestinationStream;
}

/** Keys whose values are secret wherever they appear in a logged object (also hidden in the progress view). */
export const SECRET_KEYS = [
  "token",
  "bot_token",
  "app_token",
  "api_key",
  "apiKey",
  "app_secret",
  "client_secret",
  "signing_secret",
  "encrypt_key",
  "verification_token",
  "webhook_secret",
  "admin_token",
  "secret",
  "password",
  "authorization",
  "Authorization",
];

/** Redaction paths for the secret keys at the top level and up to three levels down. */
export const REDACT_PATHS = SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `*.*.*.${k}`, `headers.${k}`]);

/** What a hidden secret is replaced with. */
export const REDACTED = "[redacted]";

/**
 * A function that replaces every one of `secrets` in a text, longest first, also in its
 * JSON-escaped form (a secret inside a logged string). Undefined when there is nothing to hide.
 */
export function secretScrubber(secrets: readonly string[]): ((text: string) => string) | undefined {
  const values = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  if (values.length === 0) return undefined;
  const forms = values.flatMap((v) => {
    const escaped = JSON.stringify(v).slice(1, -1);
    return escaped === v ? [v] : [v, escaped];
  });
  return (text) => {
    let out = text;
    for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  };
}

/** Wraps a stream so that no line it writes contains one of `secrets`. */
export function scrubbingStream(target: DestinationStream, secrets: readonly string[]): DestinationStream {
  const scrub = secretScrubber(secrets);
  if (!scrub) return target;
  return { write: (line: string) => target.write(scrub(line)) };
}

/** pino-pretty, loaded only when a terminal (or the config) asks for it; into `destination` when given. */
function prettyStream(destination?: DestinationStream): DestinationStream {
  const pretty = createRequire(import.meta.url)("pino-pretty") as typeof pinoPretty;
  return pretty({ colorize: true, sync: true, singleLine: true, ...(destination ? { destination } : {}) });
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? "auto";
  const usePretty = format === "pretty" || (format === "auto" && !options.destination && process.stdout.isTTY === true);
  const base: DestinationStream = usePretty
    ? prettyStream(options.destination)
    : (options.destination ?? pino.destination({ sync: true }));
  return pino(
    {
      level: options.level ?? "info",
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    scrubbingStream(base, options.secrets ?? []),
  );
}

/** A logger that drops everything: for library users who pass none, and for quiet tests. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
