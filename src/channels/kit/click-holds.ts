/**
 * Clicks an adapter holds open until the core says how to answer them. Some platforms let a
 * click be answered once, privately, and only within seconds (a Telegram callback answer, a
 * Feishu callback response), while the core decides only after recording and queueing it. The
 * adapter holds the click, the core calls `Channel.answerAction`, and a click the core never
 * answers (a duplicate, a full queue, a shutdown) is let go after a short wait.
 */

/** How a held click ended: the core's notice (none = just acknowledge), or `expired` when nobody answered in time. */
export type ClickVerdict = { notice?: string; expired?: true };

export class ClickHolds {
  private readonly open = new Map<string, { resolve: (v: ClickVerdict) => void; timer: NodeJS.Timeout }>();

  /** Holds click `id` for at most `waitMs`. Call it before handing the click to the core. */
  hold(id: string, waitMs: number): Promise<ClickVerdict> {
    this.settle(id, { expired: true });
    return new Promise<ClickVerdict>((resolve) => {
      const timer = setTimeout(() => this.settle(id, { expired: true }), waitMs);
      timer.unref?.();
      this.open.set(id, { resolve, timer });
    });
  }

  /** The core's answer to click `id`; false when it is no longer held (answered, or expired). */
  answer(id: string | undefined, notice?: string): boolean {
    if (id === undefined || !this.open.has(id)) return false;
    this.settle(id, notice === undefined ? {} : { notice });
    return true;
  }

  /** Lets every held click go (the channel is stopping). */
  releaseAll(): void {
    for (const id of [...this.open.keys()]) this.settle(id, { expired: true });
  }

  private settle(id: string, verdict: ClickVerdict): void {
    const entry = this.open.get(id);
    if (!entry) return;
    this.open.delete(id);
    clearTimeout(entry.timer);
    entry.resolve(verdict);
  }
}
