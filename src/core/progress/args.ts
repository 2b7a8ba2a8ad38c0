/**
 * What the progress view may say about a tool call's arguments and a tool's own words: short,
 * on one line, and never a secret. Keys the logs redact (and any key that names a token, key,
 * password, secret, credential or authorization) show as `[redacted]`, as do values that look
 * like credentials wherever they stand (bearer tokens, API keys of the well-known shapes, JWTs, a
 * URL's password or token parameters, long random strings).
 */
import { REDACTED, SECRET_KEYS } from "../../log/logger.js";

/** Longest argument summary, in characters. */
export const MAX_DETAIL = 60;
/** Longest title (a task's description, a plan step). */
export const MAX_TITLE = 60;

const LOGGED_SECRETS = new Set(SECRET_KEYS.map((k) => k.toLowerCase()));
/** Words of a key that make its value secret (`api_key`, `apiKey`, `X-Auth-Token`, `client_secret`). */
const SECRET_WORDS = new Set([
  "token",
  "key",
  "apikey",
  "password",
  "passwd",
  "pwd",
  "secret",
  "authorization",
  "auth",
  "credential",
  "credentials",
  "cookie",
  "bearer",
  "session",
  "signature",
]);

/** Whether a value under `key` must not be shown. */
export function isSecretKey(key: string): boolean {
  if (LOGGED_SECRETS.has(key.toLowerCase())) return true;
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((w) => SECRET_WORDS.has(w));
}

/** Values that are credentials by their look, wherever they appear in a text. */
const SECRET_VALUES: RegExp[] = [
  /\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\bxapp-[A-Za-z0-9-]{10,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];
/** `https://user:password@host`: the password goes. */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi;
/** `?token=…`, `&api_key=…`, `password: …`, `secret=…`: the value goes. */
const KEYED_VALUE =
  /\b([A-Za-z0-9_-]*(?:token|key|password|passwd|secret|auth|signature|credential)[A-Za-z0-9_-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s&,;"']+)/gi;
/** A long unbroken run of letters and digits mixed: a key nobody would type. */
const RANDOM_RUN = /(?<![A-Za-z0-9_+=])(?=[A-Za-z0-9_+=]*[0-9])(?=[A-Za-z0-9_+=]*[A-Za-z])[A-Za-z0-9_+=]{32,}/g;

/** `text` with every credential-looking part replaced by `[redacted]`, then `scrub` (the configured secrets). */
export function redactText(text: string, scrub?: (text: string) => string): string {
  let out = text;
  for (const pattern of SECRET_VALUES) out = out.replace(pattern, REDACTED);
  out = out
    .replace(URL_PASSWORD, `$1${REDACTED}@`)
    .replace(KEYED_VALUE, (all, key: string, sep: string) => (isSecretKey(key) ? `${key}${sep}${REDACTED}` : all))
    .replace(RANDOM_RUN, REDACTED);
  return scrub ? scrub(out) : out;
}

/** One line, at most `max` characters (an ellipsis marks a cut). */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  return `${flat.slice(0, Math.max(1, max - 1)).trimEnd()}…`;
}

/** A short, safe text: redacted first (so a cut cannot leave half a secret), then on one line and capped. */
export function safeText(text: string, max: number, scrub?: (text: string) => string): string {
  return oneLine(redactText(text, scrub), max);
}

/**
 * A tool call's arguments in a few words: the value alone for a single argument
 * (`"antler docs"`), else `key=value` pairs; nested values as their size; secrets as
 * `[redacted]`; the whole capped at {@link MAX_DETAIL}.
 */
export function summarizeArgs(args: unknown, scrub?: (text: string) => string, max = MAX_DETAIL): string {
  if (args === undefined || args === null) return "";
  if (typeof args !== "object" || Array.isArray(args)) return safeText(valueText(args), max, scrub);
  const entries = Object.entries(args as Record<string, unknown>).filter(([, v]) => v !== undefined && v !== null && v !== "");
  if (entries.length === 0) return "";
  const [only] = entries;
  if (entries.length === 1 && only && !isSecretKey(only[0]) && typeof only[1] !== "object") {
    return safeText(valueText(only[1]), max, scrub);
  }
  const parts = entries.map(([k, v]) => `${k}=${isSecretKey(k) ? REDACTED : valueText(v)}`);
  return safeText(parts.join(", "), max, scrub);
}

function valueText(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(oneLine(value, MAX_DETAIL * 2));
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.length} ${value.length === 1 ? "item" : "items"}]`;
  if (typeof value === "object" && value !== null) return "{…}";
  return String(value);
}
