/**
 * One AI card being streamed: every update replaces the card's markdown with the whole reply
 * so far (`isFull`), the last one finalizes it, and a failure marks it failed (`isError`).
 */
import type { Logger } from "../../log/logger.js";
import type { MessageHandle, NativeStream } from "../types.js";
import type { CardApi } from "./card.js";

export class CardStream implements NativeStream {
  private shown = "";

  constructor(
    readonly handle: MessageHandle,
    private readonly cards: CardApi,
    private readonly logger: Logger,
    private readonly onError: (err: unknown) => void,
  ) {}

  async update(text: string): Promise<void> {
    // The core may offer the same text twice (e.g. after a retry); one call is enough.
    if (text === this.shown) return;
    await this.call(() => this.cards.stream(this.handle.id, text));
    this.shown = text;
  }

  async finish(text: string): Promise<void> {
    await this.call(() => this.cards.stream(this.handle.id, text, { finalize: true }));
    this.shown = text;
  }

  async abort(text: string): Promise<void> {
    try {
      await this.cards.stream(this.handle.id, text, { error: true });
    } catch (err) {
      this.onError(err);
      this.logger.warn({ err, outTrackId: this.handle.id }, "dingtalk card could not be marked failed");
    }
  }

  private async call(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.onError(err);
      throw err;
    }
  }
}
