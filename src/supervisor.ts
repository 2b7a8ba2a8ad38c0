/**
 * The supervisor: restarts channels that fail, with capped exponential backoff, so a platform
 * outage heals by itself. The channel's state and last error stay visible in status throughout.
 * A failure's stack is logged once, when it first happens; each retry after that is one line
 * naming the error (`ChannelSlot.firstFailure`).
 */
import type { ChannelSlot } from "./channels/registry.js";
import type { Logger } from "./log/logger.js";

export interface SupervisorOptions {
  /** First wait before a restart; doubles after each failed attempt. */
  baseDelayMs?: number;
  /** Longest wait between attempts. */
  maxDelayMs?: number;
  /** How often channel states are checked. */
  pollMs?: number;
}

interface Attempt {
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

export class Supervisor {
  private readonly attempts = new Map<string, Attempt>();
  private poller: NodeJS.Timeout | undefined;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly pollMs: number;

  constructor(
    private readonly slots: () => ChannelSlot[],
    private readonly restart: (slot: ChannelSlot) => Promise<void>,
    private readonly logger: Logger,
    options: SupervisorOptions = {},
  ) {
    this.baseDelayMs = options.baseDelayMs ?? 1_000;
    this.maxDelayMs = options.maxDelayMs ?? 60_000;
    this.pollMs = options.pollMs ?? 1_000;
  }

  start(): void {
    this.poller = setInterval(() => this.check(), this.pollMs);
    this.poller.unref();
    this.check();
  }

  stop(): void {
    if (this.poller) clearInterval(this.poller);
    for (const attempt of this.attempts.values()) clearTimeout(attempt.timer);
    this.attempts.clear();
  }

  /** Delay before the attempt after `failures` failures. */
  delayFor(failures: number): number {
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.max(0, failures - 1));
  }

  private check(): void {
    for (const slot of this.slots()) {
      if (!slot.enabled || !slot.channel) continue;
      const state = slot.report().state;
      const attempt = this.attempts.get(slot.name);
      if (state === "running") {
        if (attempt && !attempt.timer) this.attempts.delete(slot.name);
        continue;
      }
      if (state !== "failed" || attempt?.timer) continue;
      const failures = (attempt?.failures ?? 0) + 1;
      const delay = this.delayFor(failures);
      // One line per retry: the stack of the failure was logged once, when it first happened.
      const error = slot.report().last_error?.message;
      this.logger.warn({ channel: slot.name, failures, delayMs: delay, error }, "channel failed; restarting after a delay");
      const next: Attempt = { failures, timer: undefined };
      next.timer = setTimeout(() => {
        next.timer = undefined;
        this.restart(slot).catch((err: unknown) => {
          if (slot.firstFailure(err)) this.logger.error({ err, channel: slot.name }, "channel restart failed");
        });
      }, delay);
      next.timer.unref();
      this.attempts.set(slot.name, next);
    }
  }
}
