/**
 * Long polling with getUpdates. Telegraf's own loop cannot be cancelled while it sleeps after
 * an error and hides failures from status, so this small loop drives Telegraf's client
 * instead. An update is confirmed (the next offset) only after its handler resolved, so an
 * update whose handler failed is fetched again.
 */
import type { Telegram } from "telegraf";
import type { TgUpdate } from "./inbound.js";

export interface PollerHooks {
  /** Handles one update; throwing makes the poller fetch it again after a pause. */
  handle(update: TgUpdate): Promise<void>;
  /** A getUpdates call succeeded. */
  connected(): void;
  /**
   * A getUpdates call (`poll`) or a handler (`handle`, e.g. the core could not record the
   * update) failed; return false to stop polling for good.
   */
  failed(err: unknown, retryInMs: number, where: "poll" | "handle"): boolean;
}

export interface PollerOptions {
  /** Seconds Telegram holds an empty getUpdates open. */
  timeoutSeconds: number;
  allowedUpdates: string[];
}

const MAX_BACKOFF_MS = 30_000;

export class Poller {
  private readonly abort = new AbortController();
  private offset = 0;
  private loop: Promise<void> | undefined;
  private failures = 0;

  constructor(
    private readonly telegram: Telegram,
    private readonly hooks: PollerHooks,
    private readonly options: PollerOptions,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.abort.signal.aborted) {
      let updates: TgUpdate[];
      try {
        const payload = {
          offset: this.offset,
          timeout: this.options.timeoutSeconds,
          allowed_updates: this.options.allowedUpdates,
        };
        // biome-ignore lint/suspicious/noExplicitAny: allowed_updates is typed as a closed union
        updates = (await this.telegram.callApi("getUpdates", payload as any, {
          signal: this.abort.signal as never,
        })) as TgUpdate[];
      } catch (err) {
        if (this.abort.signal.aborted) return;
        if (!(await this.pause(err, "poll"))) return;
        continue;
      }
      this.failures = 0;
      this.hooks.connected();
      for (const update of updates) {
        if (this.abort.signal.aborted) return;
        try {
          await this.hooks.handle(update);
        } catch (err) {
          if (!(await this.pause(err, "handle"))) return;
          break;
        }
        this.offset = update.update_id + 1;
      }
    }
  }

  /** Waits before the next attempt; false when the loop must end. */
  private async pause(err: unknown, where: "poll" | "handle"): Promise<boolean> {
    this.failures++;
    const retryAfter = (err as { parameters?: { retry_after?: number } }).parameters?.retry_after;
    const ms = retryAfter !== undefined ? retryAfter * 1000 : Math.min(MAX_BACKOFF_MS, 500 * 2 ** (this.failures - 1));
    if (!this.hooks.failed(err, ms, where)) return false;
    await sleep(ms, this.abort.signal);
    return !this.abort.signal.aborted;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
