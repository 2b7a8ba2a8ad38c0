/**
 * Channel threads the bot takes part in (it was mentioned there or posted there), so that
 * follow-ups in them count as addressed to the bot without a new mention. Kept in memory and
 * bounded: after a restart the first follow-up needs a mention again (see README.md).
 */
export class ThreadMemory {
  private readonly threads = new Map<string, true>();

  constructor(private readonly max = 10_000) {}

  remember(channel: string, threadTs: string): void {
    const key = `${channel}:${threadTs}`;
    this.threads.delete(key);
    this.threads.set(key, true);
    if (this.threads.size > this.max) {
      const oldest = this.threads.keys().next().value;
      if (oldest !== undefined) this.threads.delete(oldest);
    }
  }

  has(channel: string, threadTs: string): boolean {
    return this.threads.has(`${channel}:${threadTs}`);
  }
}
