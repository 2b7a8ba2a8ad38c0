/**
 * Time limits on the media desk's network waits. A download (or an upload) runs under a signal
 * that aborts when its limit passes or the conversation's `/stop` comes; the desk also stops
 * waiting at that moment itself, so an adapter that cannot pass the signal on (a `use:` channel,
 * an SDK without one) never holds the conversation past the limit. Its promise is left to settle
 * on its own.
 */

/** A limit passed; `ms` is the limit. */
export class TimeLimitError extends Error {
  override readonly name = "TimeoutError";
  constructor(
    readonly ms: number,
    what: string,
  ) {
    super(`${what} took longer than ${ms} ms`);
  }
}

/** One bounded wait: `signal` aborts when `ms` pass or `stop` aborts; `expired` tells which. */
export class TimeLimit {
  readonly signal: AbortSignal;
  readonly #limit = new AbortController();
  readonly #timer: NodeJS.Timeout;

  constructor(
    readonly ms: number,
    what: string,
    stop?: AbortSignal,
  ) {
    this.#timer = setTimeout(() => this.#limit.abort(new TimeLimitError(ms, what)), ms);
    this.signal = stop ? AbortSignal.any([stop, this.#limit.signal]) : this.#limit.signal;
  }

  /** The limit passed (rather than a stop). */
  get expired(): boolean {
    return this.#limit.signal.aborted;
  }

  /** Waits for `work`, at most until the signal aborts (then rejects with its reason). Clears the timer. */
  async run<T>(work: Promise<T>): Promise<T> {
    // Nobody awaits `work` once the limit passed: keep its late failure from being unhandled.
    work.catch(() => undefined);
    const { signal } = this;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    aborted.catch(() => undefined);
    try {
      return await Promise.race([work, aborted]);
    } finally {
      clearTimeout(this.#timer);
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
  }
}

/** A limit as people say it: "30 seconds", "1.5 seconds", "2 minutes". */
export function limitText(ms: number): string {
  if (ms >= 120_000 && ms % 60_000 === 0) return `${ms / 60_000} minutes`;
  const s = Math.round(ms / 100) / 10;
  return `${s} second${s === 1 ? "" : "s"}`;
}
