/**
 * Every platform call the renderer makes goes through an `Outbound`: it paces calls, honours
 * 429s (no call at all to the channel until `retry_after` has passed, shared by every renderer
 * on that channel, since platforms rate-limit the bot rather than one reply), reports to the
 * hooks, and retries the calls that must not be lost.
 */

import type { Channel } from "../../channels/types.js";
import {
  ChannelError,
  NotModifiedError,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
  TargetUnreachableError,
} from "../../errors.js";
import { DEFAULT_CALL_TIMEOUT_MS } from "./call-limit.js";
import type { RenderHooks } from "./hooks.js";

export { DEFAULT_CALL_TIMEOUT_MS };

const blockedUntil = new WeakMap<Channel, number>();

/**
 * How long a final delivery keeps retrying errors other than 429 (5xx, network), when the caller
 * does not say; backoff starts at `BACKOFF_MS` and doubles up to `MAX_BACKOFF_MS`.
 */
export const DEFAULT_RETRY_BUDGET_MS = 60_000;
const BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 4_000;
/** 429s a final delivery sits out before it gives up on the platform. */
const MAX_RATE_LIMIT_WAITS = 20;
/** The platform stamps a call a moment after we start it, and clocks tick in whole ms. */
const PACING_SLACK_MS = 2;

export type CallKind = "send" | "edit" | "stream";

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

export class Outbound {
  /**
   * End of the last call; -Infinity before the first. Pacing counts from when the platform
   * answered, so two requests never reach it closer than the interval, however slow the network.
   */
  lastCallAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly channel: Channel,
    readonly hooks: RenderHooks,
    /** Minimum time between two paced calls. */
    readonly intervalMs: number,
    /** A call still unanswered after this long fails with a `timeout` ChannelError. */
    readonly callTimeoutMs: number = DEFAULT_CALL_TIMEOUT_MS,
    /** How long `deliver` retries failures other than 429. */
    readonly retryBudgetMs: number = DEFAULT_RETRY_BUDGET_MS,
  ) {}

  /** Milliseconds until the channel may be called again after a 429; 0 when it may now. */
  blockedFor(): number {
    return Math.max(0, (blockedUntil.get(this.channel) ?? 0) - Date.now());
  }

  /** Earliest time (ms since epoch) a call may start. Paced calls also keep the interval. */
  readyAt(paced: boolean): number {
    const gate = blockedUntil.get(this.channel) ?? 0;
    return Math.max(gate, paced ? this.lastCallAt + this.intervalMs + PACING_SLACK_MS : 0);
  }

  async waitReady(paced: boolean): Promise<void> {
    for (let wait = this.readyAt(paced) - Date.now(); wait > 0; wait = this.readyAt(paced) - Date.now()) await sleep(wait);
  }

  /** One attempt: waits for the gate (and the interval when paced), then calls. */
  async call<T>(kind: CallKind, fn: () => Promise<T>, paced: boolean): Promise<T> {
    await this.waitReady(paced);
    try {
      const result = await this.bounded(kind, fn);
      this.hooks.onOutbound?.(kind);
      return result;
    } catch (err) {
      this.noteFailure(err);
      throw err;
    } finally {
      this.lastCallAt = Date.now();
    }
  }

  /** Runs `fn`, failing with a `timeout` error when the platform does not answer in time. */
  private async bounded<T>(kind: CallKind, fn: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new ChannelError(this.channel.name, "timeout", `${kind} got no answer in ${this.callTimeoutMs} ms`)),
        this.callTimeoutMs,
      );
    });
    try {
      return await Promise.race([fn(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Records a failed call: a 429 closes the gate; other real failures go to `onError`. */
  noteFailure(err: unknown, report = true): void {
    if (err instanceof PlatformRateLimitError) {
      const until = Date.now() + err.retryAfterMs;
      if (until > (blockedUntil.get(this.channel) ?? 0)) blockedUntil.set(this.channel, until);
      this.hooks.onRateLimited?.(err.retryAfterMs);
    } else if (!(err instanceof NotModifiedError) && report) {
      this.hooks.onError?.(err);
    }
  }

  /**
   * A call that must not be lost: 429s are waited out, other errors (5xx, network, timeouts)
   * retried with backoff for `retryBudgetMs` in all, or `attempts` times when given. "Not
   * modified" counts as done. A missing target or rejected credentials fail at once, since
   * retrying cannot help; the caller decides what to do instead.
   */
  async deliver<T>(kind: CallKind, fn: () => Promise<T>, paced: boolean, attempts?: number): Promise<T | undefined> {
    const started = Date.now();
    let failures = 0;
    let waits = 0;
    for (;;) {
      try {
        return await this.call(kind, fn, paced);
      } catch (err) {
        if (err instanceof NotModifiedError) return undefined;
        if (err instanceof PlatformRateLimitError) {
          if (++waits <= MAX_RATE_LIMIT_WAITS) continue;
          throw err;
        }
        if (err instanceof PlatformNotFoundError || err instanceof PlatformAuthError || err instanceof TargetUnreachableError)
          throw err;
        const backoff = Math.min(MAX_BACKOFF_MS, BACKOFF_MS * 2 ** failures++);
        const more = attempts !== undefined ? failures < attempts : Date.now() + backoff - started < this.retryBudgetMs;
        if (!more) throw err;
        await sleep(backoff);
      }
    }
  }
}
