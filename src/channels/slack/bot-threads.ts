/**
 * Channel threads the bot takes part in (it was mentioned there or posted there), so that
 * follow-ups in them count as addressed to the bot (`mentioned`) without a new mention. Kept in
 * memory and bounded (the kit's `RecentSet`): after a restart the core's durable `inThread` rule
 * still lets a follow-up in a thread it knows continue the conversation (see README.md).
 */
import { RecentSet } from "../kit/recent.js";

export class ThreadMemory {
  private readonly threads: RecentSet;

  constructor(max = 10_000) {
    this.threads = new RecentSet(max);
  }

  remember(channel: string, threadTs: string): void {
    this.threads.add(`${channel}:${threadTs}`);
  }

  has(channel: string, threadTs: string): boolean {
    return this.threads.has(`${channel}:${threadTs}`);
  }
}
