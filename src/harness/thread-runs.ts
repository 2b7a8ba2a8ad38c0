/**
 * The per-thread run guard every harness that drives runs itself shares: one run per thread at a
 * time (a second gets a `busy` error), none after `close()` (an `internal` error), `cancel` and
 * the caller's signal (a `/stop`, a timeout) both abort the run's controller, and the thread is
 * free again once the run's stream is finished or dropped.
 *
 * What a run does, and how it is repaired when it stops early, is the backend's own.
 */
import { MESSAGES } from "./run-errors.js";
import type { RunEvent } from "./types.js";

export class ThreadRuns {
  readonly #active = new Map<string, AbortController>();
  #closed = false;

  /** True once `close` was called: no run starts any more. */
  get closed(): boolean {
    return this.#closed;
  }

  /** How many runs are going. */
  get size(): number {
    return this.#active.size;
  }

  /** Whether a run on the thread is going. */
  has(threadId: string): boolean {
    return this.#active.has(threadId);
  }

  /** Aborts the thread's run; false when none is going. */
  cancel(threadId: string): boolean {
    const active = this.#active.get(threadId);
    if (!active) return false;
    active.abort();
    return true;
  }

  /**
   * Streams `run` as the thread's one run. `run` gets the run's controller, aborted by `cancel`,
   * by `signal` (with its reason) and by `close`; it does its own clean-up in its `finally`,
   * before the thread is free again.
   */
  async *drive(
    threadId: string,
    signal: AbortSignal | undefined,
    run: (controller: AbortController) => AsyncGenerator<RunEvent>,
  ): AsyncGenerator<RunEvent> {
    if (this.#closed) {
      yield { type: "error", code: "internal", message: MESSAGES.internal };
      return;
    }
    if (this.#active.has(threadId)) {
      yield { type: "error", code: "busy", message: MESSAGES.busy };
      return;
    }
    const controller = new AbortController();
    this.#active.set(threadId, controller);
    const abort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", abort, { once: true });
    if (signal?.aborted) controller.abort(signal.reason);
    try {
      yield* run(controller);
    } finally {
      signal?.removeEventListener("abort", abort);
      this.#active.delete(threadId);
    }
  }

  /** Refuses new runs and aborts the going ones with `reason`. */
  close(reason?: unknown): void {
    this.#closed = true;
    for (const controller of this.#active.values()) controller.abort(reason);
  }

  /** Waits until every run has finished its clean-up, or `ms` passed. */
  async settle(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.#active.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }
}
