/**
 * A repeating task that never overlaps itself: the next run is scheduled when the previous one
 * ends. A query stuck on an unreachable database therefore holds its loop back instead of
 * piling up more stuck queries; whatever must happen on time (giving a lease up) has its own timer.
 */
export class Loop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly tick: () => Promise<void>,
    private readonly everyMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Runs the first tick now. */
  start(): void {
    this.schedule(0);
  }

  /** Runs the next tick at once, unless one is running or the loop stopped. */
  poke(): void {
    if (this.running || this.stopped) return;
    clearTimeout(this.timer);
    this.schedule(0);
  }

  /** Stops scheduling; the promise ends when a tick under way has ended. */
  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    return this.running ?? Promise.resolve();
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => this.run(), ms);
    this.timer.unref();
  }

  private run(): void {
    this.running = this.tick()
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
        if (!this.stopped) this.schedule(this.everyMs);
      });
  }
}

/** A promise that settles with `promise`, or rejects with the signal's reason once it aborts. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Waits `ms`, or less when `wake` is called (it returns the function that wakes it early). */
export function sleep(ms: number, signal?: AbortSignal): { done: Promise<void>; wake: () => void } {
  let wake!: () => void;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return { done: abortable(done, signal), wake };
}
