/**
 * A counting semaphore per parent run: at most `limit` subagents of one run work at once, and
 * further `task` calls wait, first come first served. A waiter whose signal aborts (`/stop`, the
 * run's timeout) leaves the line at once. A run's entry is dropped as soon as nothing holds or
 * waits for a slot, so finished runs leave nothing behind.
 */

interface Line {
  running: number;
  waiting: Array<{ wake: () => void }>;
}

/** Frees a slot; calling it twice frees it once. */
export type Release = () => void;

export class RunSlots {
  readonly #lines = new Map<unknown, Line>();

  constructor(readonly limit: number) {}

  /** Slots of `run` in use now. */
  running(run: unknown): number {
    return this.#lines.get(run)?.running ?? 0;
  }

  /**
   * A slot of `run`, once one is free; `onWait` is told first when the call has to wait. Rejects
   * with the signal's reason when `signal` aborts before a slot is free.
   */
  async acquire(run: unknown, signal?: AbortSignal, onWait?: () => void): Promise<Release> {
    signal?.throwIfAborted();
    const line = this.#lines.get(run) ?? { running: 0, waiting: [] };
    this.#lines.set(run, line);
    if (line.running < this.limit) {
      line.running++;
      return this.#release(run, line);
    }
    onWait?.();
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        wake: () => {
          signal?.removeEventListener("abort", abort);
          resolve();
        },
      };
      const abort = () => {
        line.waiting.splice(line.waiting.indexOf(waiter), 1);
        this.#forgetIdle(run, line);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", abort, { once: true });
      line.waiting.push(waiter);
    });
    return this.#release(run, line);
  }

  /** The slot handed on to the first waiter, else given back. */
  #release(run: unknown, line: Line): Release {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = line.waiting.shift();
      if (next) next.wake();
      else {
        line.running--;
        this.#forgetIdle(run, line);
      }
    };
  }

  #forgetIdle(run: unknown, line: Line): void {
    if (line.running === 0 && line.waiting.length === 0 && this.#lines.get(run) === line) this.#lines.delete(run);
  }
}
