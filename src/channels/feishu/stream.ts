/**
 * Native streaming through CardKit: create a card entity in streaming mode, send it as the
 * reply, then PUT the whole text into its markdown element (the client types out what was
 * added) and close streaming mode at the end. The progress view is a section under the text
 * (progress.ts), added, replaced and removed through CardKit's element APIs by its element id.
 * Every operation on a card carries a `sequence` that must strictly increase, or the platform
 * answers 300317.
 */
import type { Logger } from "../../log/logger.js";
import { RecentMap } from "../kit/recent.js";
import type { ConversationRef, MessageHandle, NativeStream, ProgressContent } from "../types.js";
import type { FeishuApi } from "./api.js";
import { STREAM_ELEMENT_ID, streamingCard } from "./cards.js";
import { toCardMarkdown } from "./format.js";
import { PROGRESS_ELEMENT_ID, progressElement } from "./progress.js";
import { settledRef } from "./targets.js";

/** The last `sequence` used per card, shared by streams and later edits of the same card. */
export class CardSequences {
  private readonly last: RecentMap<number>;

  constructor(max = 2000) {
    this.last = new RecentMap(max);
  }

  /**
   * The next sequence for `cardId`. A card this process has not seen (e.g. after a restart)
   * starts from the clock in seconds, which is above any counter a stream reaches.
   */
  next(cardId: string): number {
    const value = (this.last.get(cardId) ?? Math.floor(Date.now() / 1000)) + 1;
    this.last.set(cardId, value);
    return value;
  }

  /** Starts a fresh card at 0, so its first operation sends sequence 1. */
  begin(cardId: string): void {
    this.last.set(cardId, 0);
  }
}

export class CardKitStream implements NativeStream {
  private shown = "";
  private closed = false;
  /** The progress section on the card now: its tag and JSON as last sent. */
  private section: { tag: unknown; json: string } | undefined;

  private constructor(
    readonly handle: MessageHandle,
    private readonly cardId: string,
    private readonly api: FeishuApi,
    private readonly sequences: CardSequences,
    private readonly logger: Logger,
  ) {}

  /** Creates the card and sends it into the conversation. Throws typed errors when either fails. */
  static async open(api: FeishuApi, ref: ConversationRef, sequences: CardSequences, logger: Logger): Promise<CardKitStream> {
    const cardId = await api.createCard(streamingCard());
    sequences.begin(cardId);
    const posted = await api.postMessage(ref, "interactive", JSON.stringify({ type: "card", data: { card_id: cardId } }));
    const handle: MessageHandle = { id: posted.id, ref: settledRef(ref, posted), extra: { kind: "cardkit", cardId } };
    return new CardKitStream(handle, cardId, api, sequences, logger);
  }

  async update(text: string): Promise<void> {
    if (this.closed) throw new Error("the card stream is already closed");
    const content = toCardMarkdown(text);
    if (content === this.shown) return;
    await this.api.streamContent(this.cardId, STREAM_ELEMENT_ID, content, this.next());
    this.shown = content;
  }

  /**
   * Shows `view` as the section under the text: added the first time, replaced after (removed
   * and added again when it changes kind, e.g. a line that becomes a panel), removed once nothing
   * is left to show. An unchanged view costs no call.
   */
  async progress(view: ProgressContent): Promise<void> {
    if (this.closed) return;
    const element = progressElement(view);
    const json = element ? JSON.stringify(element) : undefined;
    if (json === this.section?.json) return;
    if (this.section && (!element || element.tag !== this.section.tag)) {
      await this.api.deleteElement(this.cardId, PROGRESS_ELEMENT_ID, this.next());
      this.section = undefined;
    }
    if (!element || json === undefined) return;
    if (this.section) await this.api.replaceElement(this.cardId, PROGRESS_ELEMENT_ID, element, this.next());
    else await this.api.addElements(this.cardId, STREAM_ELEMENT_ID, [element], this.next());
    this.section = { tag: element.tag, json };
  }

  async finish(text: string): Promise<void> {
    try {
      await this.update(text);
    } finally {
      await this.close();
    }
  }

  async abort(text: string): Promise<void> {
    try {
      if (!this.closed && text) await this.update(text);
    } catch (err) {
      this.logger.warn({ err, cardId: this.cardId }, "could not show the last text on an aborted card");
    }
    await this.close();
  }

  private next(): number {
    return this.sequences.next(this.cardId);
  }

  /**
   * Closing is best effort: the text is already on the card, and the platform closes streaming
   * mode by itself after 10 minutes, so a failure here must not make the core send it again.
   */
  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.api.closeStreaming(this.cardId, this.next());
    } catch (err) {
      this.logger.warn({ err, cardId: this.cardId }, "could not close the card's streaming mode");
    }
  }
}
