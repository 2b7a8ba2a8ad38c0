/**
 * The message each conversation is answering now, by its stop switch: registered before its run
 * waits for a run slot, so `/stop` (here, or from another replica) reaches it early.
 */
export class ActiveRuns {
  private readonly active = new Map<string, AbortController>();
  /** When each was registered (this process's clock). */
  private readonly claimedAt = new WeakMap<AbortController, number>();

  /** Registers the conversation's message in progress, so /stop can reach it from now on. */
  claim(key: string): AbortController {
    const controller = new AbortController();
    this.active.set(key, controller);
    this.claimedAt.set(controller, Date.now());
    return controller;
  }

  /** The message is finished; a later one of the conversation that claimed since is left alone. */
  release(key: string, controller: AbortController): void {
    if (this.active.get(key) === controller) this.active.delete(key);
  }

  /** The stop switch of the conversation's message in progress, if any. */
  of(key: string): AbortController | undefined {
    return this.active.get(key);
  }

  has(key: string): boolean {
    return this.active.has(key);
  }

  keys(): string[] {
    return [...this.active.keys()];
  }

  /** Stops the conversation's message if it was claimed at least `madeMsAgo` ago; false when none was. */
  stopIfBefore(key: string, madeMsAgo: number): boolean {
    const run = this.active.get(key);
    if (!run || Date.now() - (this.claimedAt.get(run) ?? 0) < madeMsAgo) return false;
    run.abort();
    return true;
  }

  /** Stops every message in progress with `reason`. */
  abortAll(reason: unknown): void {
    for (const controller of this.active.values()) controller.abort(reason);
  }
}
