/**
 * One AI card being streamed: every update replaces the card's markdown with the whole reply
 * so far (`isFull`), the last one finalizes it, and a failure marks it failed (`isError`). When
 * the template has a progress variable, the progress view goes into it through the card's data
 * update (`PUT /v1.0/card/instances`, by key), beside the streamed text.
 */
import type { Logger } from "../../log/logger.js";
import type { PlatformCalls } from "../kit/platform-call.js";
import type { MessageHandle, NativeStream, ProgressContent } from "../types.js";
import type { CardApi } from "./card.js";

export class CardStream implements NativeStream {
  private shown = "";
  /** The progress variable as last written. */
  private shownProgress = "";
  /** Present only when the template has a progress variable: otherwise the stream shows no view. */
  readonly progress?: (view: ProgressContent) => Promise<void>;

  constructor(
    readonly handle: MessageHandle,
    private readonly cards: CardApi,
    private readonly logger: Logger,
    private readonly calls: PlatformCalls,
  ) {
    if (cards.showsProgress) this.progress = (view) => this.showProgress(view);
  }

  private async showProgress(view: ProgressContent): Promise<void> {
    const params = this.cards.progressParams(view);
    const value = Object.values(params)[0] ?? "";
    if (value === this.shownProgress) return;
    await this.calls.run("card update", () => this.cards.update(this.handle.id, params));
    this.shownProgress = value;
  }

  async update(text: string): Promise<void> {
    // The core may offer the same text twice (e.g. after a retry); one call is enough.
    if (text === this.shown) return;
    await this.calls.run("card stream", () => this.cards.stream(this.handle.id, text));
    this.shown = text;
  }

  async finish(text: string): Promise<void> {
    await this.calls.run("card stream", () => this.cards.stream(this.handle.id, text, { finalize: true }));
    this.shown = text;
  }

  async abort(text: string): Promise<void> {
    try {
      await this.cards.stream(this.handle.id, text, { error: true });
    } catch (err) {
      this.calls.failure(err, "card stream");
      this.logger.warn({ err, outTrackId: this.handle.id }, "dingtalk card could not be marked failed");
    }
  }
}
