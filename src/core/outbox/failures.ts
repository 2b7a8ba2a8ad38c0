/**
 * How a failed delivery attempt is judged: tried again later (the platform was down, slow or
 * busy), or given up at once (the target is gone, the content is refused, the setup cannot work),
 * and the short reason people see for it: never the platform's raw error body.
 */
import { AntlerError, errorMessage } from "../../errors.js";

/** Codes that retrying cannot fix. */
const PERMANENT = new Set([
  "unreachable",
  "not_found",
  "auth_failed",
  "forbidden",
  "content_rejected",
  "not_supported",
  "config_missing",
  "config_invalid",
  "unknown_agent",
]);

/** Codes that mean the target itself is gone: a schedule aimed at it is disabled. */
export const TARGET_GONE = new Set(["unreachable", "not_found"]);

export function failureCode(err: unknown): string {
  return err instanceof AntlerError ? err.code : "unknown";
}

export function isPermanent(err: unknown): boolean {
  return PERMANENT.has(failureCode(err));
}

/** One line for the status and the API: a typed error's message (it names the channel), else a generic one. */
export function failureReason(err: unknown): string {
  const text = err instanceof AntlerError ? errorMessage(err) : "delivery failed";
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

/** The wait before attempt `attempt + 1`: the backoff, doubled each time, at most 15 minutes. */
export function backoffMs(baseMs: number, attempt: number): number {
  return Math.min(15 * 60_000, baseMs * 2 ** Math.max(0, attempt - 1));
}
