/**
 * Sending and editing. Replies go out as interactive cards (`update_multi`, so PATCH can
 * replace them); when a card call fails for a reason other than rate limits or credentials,
 * the text goes out as a plain `text` message instead, so the reply always arrives.
 */
import { PlatformAuthError, PlatformNotFoundError, PlatformRateLimitError, TargetUnreachableError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { progressLines } from "../kit/progress.js";
import type { ConversationRef, MessageHandle, OutboundContent } from "../types.js";
import type { FeishuApi } from "./api.js";
import { type CardButtons, messageCard, restoreButtons, storedButtons } from "./cards.js";
import { toPlainText } from "./format.js";
import type { CardSequences } from "./stream.js";
import { settledRef } from "./targets.js";

export class FeishuOutbound {
  constructor(
    private readonly api: FeishuApi,
    private readonly sequences: CardSequences,
    private readonly logger: Logger,
  ) {}

  /** Posts a card (or its text); `uuid` makes Feishu post it once. The handle's ref is where it landed (see targets.ts). */
  async send(ref: ConversationRef, content: OutboundContent, uuid?: string): Promise<MessageHandle> {
    const buttons = newButtons(content);
    const card = messageCard(ref, content.text, buttons, content.progress);
    try {
      const posted = await this.api.postMessage(ref, "interactive", JSON.stringify(card), uuid);
      const extra: MessageHandle["extra"] = { kind: "card" };
      const stored = storedButtons(content);
      if (stored) extra.buttons = stored;
      return { id: posted.id, ref: settledRef(ref, posted), extra };
    } catch (err) {
      if (!canFallBack(err)) throw err;
      this.logger.warn({ err }, "card send failed; sending plain text");
      const text = JSON.stringify({ text: plainText(content, buttons) });
      const posted = await this.api.postMessage(ref, "text", text, uuid);
      return { id: posted.id, ref: settledRef(ref, posted), extra: { kind: "text", textId: posted.id } };
    }
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    const buttons = content.buttons === undefined ? restoreButtons(handle.extra?.buttons) : newButtons(content);
    const kind = handle.extra?.kind;
    if (kind !== "text") {
      try {
        const card = messageCard(handle.ref, content.text, buttons, content.progress);
        const cardId = handle.extra?.cardId;
        // Cards sent by card_id ignore message PATCH; they are replaced through CardKit.
        if (kind === "cardkit" && typeof cardId === "string") {
          // The replacement also ends streaming mode, whatever state the broken stream left.
          const closed = { ...card, config: { ...(card.config as object), streaming_mode: false } };
          await this.api.replaceCard(cardId, closed, this.sequences.next(cardId));
        } else {
          await this.api.patchCard(handle.id, card);
        }
        return;
      } catch (err) {
        if (!canFallBack(err)) throw err;
        this.logger.warn({ err, messageId: handle.id }, "card update failed; showing the text as a plain message");
      }
    }
    await this.editAsText(handle, plainText(content, buttons));
  }

  /**
   * Shows the text in the handle's plain-text companion: edits it when there is one, else (or
   * when the edit is refused, e.g. past the 20-edit limit) posts a new one and remembers it.
   */
  private async editAsText(handle: MessageHandle, text: string): Promise<void> {
    const textId = handle.extra?.textId;
    if (typeof textId === "string") {
      try {
        await this.api.editText(textId, text);
        return;
      } catch (err) {
        if (!canFallBack(err)) throw err;
        this.logger.warn({ err, messageId: textId }, "text edit failed; posting the text again");
      }
    }
    const id = await this.api.post(handle.ref, "text", JSON.stringify({ text }));
    handle.extra = { ...handle.extra, textId: id };
  }
}

function newButtons(content: OutboundContent): CardButtons | undefined {
  return content.buttons?.length ? { buttons: content.buttons, questionId: content.questionId ?? "" } : undefined;
}

/** Rate limits are retried by the core and bad credentials fail everything, so only other failures fall back. */
function canFallBack(err: unknown): boolean {
  return !(
    err instanceof PlatformRateLimitError ||
    err instanceof PlatformAuthError ||
    err instanceof PlatformNotFoundError ||
    err instanceof TargetUnreachableError
  );
}

/**
 * Plain text has no buttons or sections: the progress view becomes lines under the text, and the
 * options are listed (a reply in the conversation answers too).
 */
function plainText(content: OutboundContent, buttons: CardButtons | undefined): string {
  const view = toPlainText(progressLines(content.progress));
  const text = [toPlainText(content.text), view].filter(Boolean).join("\n\n");
  if (!buttons?.buttons.length) return text;
  const options = buttons.buttons.map((b, i) => `${i + 1}. ${b.label}`).join("\n");
  return `${text}\n\n${options}`;
}
