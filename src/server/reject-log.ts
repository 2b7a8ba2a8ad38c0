/**
 * Rate-limited log lines for refused requests. A flood of bad requests (forged signatures,
 * oversized or malformed bodies) must not flood the log: each route and reason gets at most one
 * line per window, and that line says how many like it were left out since the last one.
 */
import type { Logger } from "../log/logger.js";

/** One line per route and reason per this many milliseconds. */
export const REJECT_LOG_WINDOW_MS = 10_000;
/** Route/reason pairs remembered at most; the oldest is forgotten first. */
const MAX_KEYS = 500;

export type RejectLevel = "warn" | "info" | "debug";

interface Entry {
  loggedAt: number;
  suppressed: number;
}

export class RejectLog {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly logger: Logger,
    private readonly windowMs = REJECT_LOG_WINDOW_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Logs that a request to `route` was refused for `reason`, unless one like it was logged within the window. */
  note(route: string, status: number, reason: string, level: RejectLevel = "warn"): void {
    const key = `${route}\n${reason}`;
    const at = this.now();
    const entry = this.entries.get(key);
    if (entry && at - entry.loggedAt < this.windowMs) {
      entry.suppressed += 1;
      return;
    }
    const suppressed = entry?.suppressed ?? 0;
    this.entries.delete(key);
    this.entries.set(key, { loggedAt: at, suppressed: 0 });
    if (this.entries.size > MAX_KEYS) this.entries.delete(this.entries.keys().next().value as string);
    this.logger[level]({ route, status, reason, ...(suppressed ? { suppressed } : {}) }, "http request refused");
  }
}
