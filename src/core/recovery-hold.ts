/**
 * Holds the conversations a previous process left unfinished while a channel starts: each gets a
 * job at the front of its queue before the channel can deliver anything, and recovery does its
 * work inside that job. A message sent while the gateway was down (delivered as soon as the
 * channel starts) so waits behind the ones accepted before the crash, and while a held
 * conversation recovers, new messages there queue instead of following up (followups/).
 */
import type { CoreContext } from "./context.js";

export class RecoveryHold {
  private readonly gates = new Map<string, (work: () => Promise<void>) => void>();
  private readonly done = new Map<string, Promise<void>>();

  constructor(core: CoreContext, keys: Iterable<string>) {
    for (const key of new Set(keys)) {
      let open!: (work: () => Promise<void>) => void;
      const handed = new Promise<() => Promise<void>>((resolve) => {
        open = resolve;
      });
      let finished!: () => void;
      this.done.set(key, new Promise<void>((resolve) => (finished = resolve)));
      const job = async () => {
        try {
          await (await handed)();
        } finally {
          core.holding.delete(key);
          finished();
        }
      };
      if (!core.queue.push(key, job)) continue;
      core.holding.add(key);
      this.gates.set(key, open);
    }
  }

  /** Runs `work` in the conversation's held place in its queue; resolves when it is done. */
  run(key: string, work: () => Promise<void>): Promise<void> {
    const open = this.gates.get(key);
    if (!open) return work();
    this.gates.delete(key);
    open(work);
    return this.done.get(key)!;
  }

  /** Lets every conversation not handed work go on (the channel did not start, or had nothing there). */
  release(): void {
    for (const open of this.gates.values()) open(async () => undefined);
    this.gates.clear();
  }
}
