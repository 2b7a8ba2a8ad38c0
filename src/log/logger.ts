/**
 * Logging: pino, JSON by default and pretty on a TTY. Secrets are removed twice: pino's
 * `redact` blanks secret-bearing keys in logged objects, and a scrubbing stream replaces every
 * configured secret value wherever it appears in a line (an error message, a URL, …).
 */
import pino, { type DestinationStream, type Logger } from "pino";
import pretty from "pino-pretty";

export type { Logger } from "pino";

export interface LoggerOptions {
  level?: string;
  /** `auto` is pretty on a TTY and JSON otherwise. */
  format?: "auto" | "json" | "pretty";
  /** Values that must never be written, whatever key or message they hide in. */
  secrets?: readonly string[];
  /** Where lines go; stdout by default. Tests pass a collector. */
  destination?: DestinationStream;
}

const SECRET_KEYS = [
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

const REDACTED = "[redacted]";

/** Wraps a stream so that no line it writes contains one of `secrets`. */
export function scrubbingStream(target: DestinationStream, secrets: readonly string[]): DestinationStream {
  const values = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  if (values.length === 0) return target;
  return {
    write(line: string) {
      let out = line;
      for (const v of values) if (out.includes(v)) out = out.split(v).join(REDACTED);
      // A secret can also appear JSON-escaped inside a logged string.
      for (const v of values) {
        const escaped = JSON.stringify(v).slice(1, -1);
        if (escaped !== v && out.includes(escaped)) out = out.split(escaped).join(REDACTED);
      }
      target.write(out);
    },
  };
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? "auto";
  const usePretty = format === "pretty" || (format === "auto" && !options.destination && process.stdout.isTTY === true);
  const base: DestinationStream =
    options.destination ?? (usePretty ? pretty({ colorize: true, sync: true }) : pino.destination({ sync: true }));
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
