/**
 * Ordering and concurrency for runs: a bounded FIFO per conversation (runs in one conversation
 * never overlap) and a global semaphore (caps runs across all conversations).
 */

/** Counts and caps concurrent holders; waiters are served first come, first served. */
export class Semaphore {
  private active = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  get inUse(): number {
    return this.active;
  }

  async acquire(): Promise<() => void> {
    if (this.active < this.limit) {
      this.active++;
    } else {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return this.releaser();
  }

  /**
   * A slot at once if one is free, else undefined; never waits. A slot is free only while nobody
   * waits for one, so this never overtakes a waiter.
   */
  tryAcquire(): (() => void) | undefined {
    if (this.active >= this.limit) return undefined;
    this.active++;
    return this.releaser();
  }

  /** Gives the slot to the first waiter, or back to the pool; a second call does nothing. */
  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.active--;
    };
  }
}

type Job = () => Promise<void>;

interface Lane {
  waiting: Job[];
  running: boolean;
}

/** One FIFO per key. A job for a key starts only after the previous job for that key ended. */
export class KeyedQueue {
  private readonly lanes = new Map<string, Lane>();
  private readonly idle = new Set<() => void>();

  /** @param capacity most jobs waiting per key (the running one not counted). */
  constructor(
    private readonly capacity: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Queues `job` behind the key's earlier jobs. Returns false (and drops it) when the key's queue is full. */
  push(key: string, job: Job): boolean {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { waiting: [], running: false };
      this.lanes.set(key, lane);
    }
    if (lane.waiting.length >= this.capacity) return false;
    lane.waiting.push(job);
    if (!lane.running) void this.drain(key, lane);
    return true;
  }

  /** Keys with a job running or waiting. */
  keys(): string[] {
    return [...this.lanes.keys()];
  }

  /** True while a job for `key` is running. */
  isBusy(key: string): boolean {
    return this.lanes.get(key)?.running ?? false;
  }

  /** Jobs waiting (not running) for `key`. */
  waiting(key: string): number {
    return this.lanes.get(key)?.waiting.length ?? 0;
  }

  /** Jobs waiting (not running) across all keys. */
  get depth(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.waiting.length;
    return n;
  }

  /** Resolves when no job is running or waiting. */
  async whenIdle(): Promise<void> {
    if (this.lanes.size === 0) return;
    await new Promise<void>((resolve) => this.idle.add(resolve));
  }

  private async drain(key: string, lane: Lane): Promise<void> {
    lane.running = true;
    for (let job = lane.waiting.shift(); job; job = lane.waiting.shift()) {
      try {
        await job();
      } catch (err) {
        this.onError(err);
      }
    }
    lane.running = false;
    this.lanes.delete(key);
    if (this.lanes.size === 0) {
      for (const resolve of this.idle) resolve();
      this.idle.clear();
    }
  }
}
