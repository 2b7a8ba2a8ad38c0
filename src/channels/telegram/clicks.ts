/**
 * Answering button clicks (`answerCallbackQuery`). A click is held open while the core decides
 * (see ../click-holds.ts), so a refusal can reach only the clicker, as an alert; a click the core
 * takes, or never answers, gets a plain answer that just stops the button's spinner.
 */
import type { Telegram } from "telegraf";
import { errorMessage } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { ClickHolds } from "../kit/click-holds.js";
import type { InboundMessage } from "../types.js";

/**
 * How long a click waits for the core. Telegram's clients show a spinner until the answer and
 * refuse answers after some seconds ("query is too old"); the core answers in milliseconds
 * unless the conversation's queue is busy.
 */
export const CLICK_HOLD_MS = 2500;

export class ClickAnswers {
  private readonly holds = new ClickHolds();

  constructor(
    private readonly telegram: () => Telegram,
    private readonly logger: Logger,
  ) {}

  /** Hands a click to `sink`, answering its query once the core decided or the hold ran out. */
  async take(queryId: string, click: InboundMessage, sink: (m: InboundMessage) => Promise<void>): Promise<void> {
    // Taken now: a click let go by stop() is still answered through the client it came from.
    const api = this.telegram();
    const verdict = this.holds.hold(queryId, CLICK_HOLD_MS);
    void verdict.then((v) => this.answer(queryId, v.notice, api));
    await sink(click);
  }

  /** `Channel.answerAction`: false when the click is no longer held (answered already, or too late). */
  async answerAction(msg: InboundMessage, notice?: string): Promise<boolean> {
    return this.holds.answer(msg.action?.callbackId, notice);
  }

  /** Answers a query; with `text`, as an alert only the clicker sees. Never throws. */
  async answer(queryId: string, text?: string, api = this.telegram()): Promise<void> {
    try {
      await api.answerCbQuery(queryId, text, text ? { show_alert: true } : undefined);
    } catch (err) {
      // A redelivered click's query may be too old to answer; the click itself still counts.
      this.logger.debug({ err: errorMessage(err) }, "answerCallbackQuery failed");
    }
  }

  /** The channel stops: held clicks get their plain answer now. */
  releaseAll(): void {
    this.holds.releaseAll();
  }
}
