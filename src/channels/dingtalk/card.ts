/**
 * AI cards: create-and-deliver into a chat, stream the reply into the template's markdown
 * variable, and update card data (buttons). Buttons are written as a JSON list into the
 * template's button variable; each carries compact params that come back on a click.
 */
import { randomUUID } from "node:crypto";
import type { ButtonSpec, ConversationRef, ProgressContent } from "../types.js";
import type { DingTalkApi } from "./api.js";
import { toDingTalkMarkdown } from "./format.js";
import { progressValue } from "./progress.js";

/** What a button click carries back (short keys: the params travel with every card). */
export interface CardClickParams {
  /** Question id. */
  q: string;
  /** Button id. */
  b: string;
  /** Conversation key of the question. */
  k: string;
  /** conversationId of the chat. */
  c: string;
  /** Chat type. */
  t: "direct" | "group";
  /** Staff id of the DM partner, for proactive sends. */
  s?: string;
}

/** One entry of the template's button list variable. */
export interface CardButton {
  text: string;
  actionId: string;
  params: CardClickParams;
}

/** What a card shows beside its text. */
export interface CardExtras {
  buttons?: ButtonSpec[];
  questionId?: string;
  progress?: ProgressContent;
}

/** The AI card `flowStatus` values. */
export const FLOW = { processing: "1", inputting: "2", finished: "3", failed: "5" } as const;

export interface CardSettings {
  templateId: string;
  contentKey: string;
  /** Button list variable; undefined when the template has no buttons. */
  buttonsKey?: string;
  /** Markdown variable for the progress view (progress.ts); undefined when the template has none. */
  progressKey?: string;
  robotCode: (ref: ConversationRef) => string;
  /** Ask DingTalk to deliver clicks over the stream connection. */
  streamCallbacks: boolean;
}

export class CardApi {
  constructor(
    private readonly api: DingTalkApi,
    private readonly settings: CardSettings,
  ) {}

  /** The card's open space for a chat, or undefined when DingTalk offers none (DM without staff id). */
  openSpaceId(ref: ConversationRef): string | undefined {
    if (ref.chatType === "group") return `dtv1.card//IM_GROUP.${ref.chatId}`;
    const staff = ref.extra?.staffId;
    return typeof staff === "string" && staff ? `dtv1.card//IM_ROBOT.${staff}` : undefined;
  }

  /** Whether the template has a variable for the progress view. */
  get showsProgress(): boolean {
    return this.settings.progressKey !== undefined;
  }

  /**
   * Card data for `text` (Markdown) with `buttons` (an empty list clears them) and the progress
   * view (none clears it, when the template has its variable).
   */
  params(ref: ConversationRef, text: string, flow: string, content: CardExtras = {}) {
    const map: Record<string, string> = { [this.settings.contentKey]: toDingTalkMarkdown(text), flowStatus: flow };
    const key = this.settings.buttonsKey;
    if (key && content.buttons) map[key] = JSON.stringify(this.buttons(ref, content.buttons, content.questionId ?? ""));
    Object.assign(map, this.progressParams(content.progress));
    return map;
  }

  /** The progress variable alone, for a card that streams (other variables keep their values). */
  progressParams(view: ProgressContent | undefined): Record<string, string> {
    const key = this.settings.progressKey;
    return key ? { [key]: progressValue(view) } : {};
  }

  private buttons(ref: ConversationRef, buttons: ButtonSpec[], questionId: string): CardButton[] {
    const staff = typeof ref.extra?.staffId === "string" ? ref.extra.staffId : undefined;
    return buttons.map((b) => ({
      text: b.label,
      actionId: b.id,
      params: { q: questionId, b: b.id, k: ref.key, c: ref.chatId, t: ref.chatType, ...(staff ? { s: staff } : {}) },
    }));
  }

  /** Creates a card in the chat and returns its outTrackId. */
  async create(ref: ConversationRef, openSpaceId: string, cardParamMap: Record<string, string>): Promise<string> {
    const outTrackId = `antler-${randomUUID()}`;
    const group = ref.chatType === "group";
    const body: Record<string, unknown> = {
      cardTemplateId: this.settings.templateId,
      outTrackId,
      cardData: { cardParamMap },
      openSpaceId,
      userIdType: 1,
      ...(this.settings.streamCallbacks ? { callbackType: "STREAM" } : {}),
      ...(group
        ? {
            imGroupOpenSpaceModel: { supportForward: true },
            imGroupOpenDeliverModel: { robotCode: this.settings.robotCode(ref) },
          }
        : { imRobotOpenSpaceModel: { supportForward: true }, imRobotOpenDeliverModel: { spaceType: "IM_ROBOT" } }),
    };
    await this.api.call("POST", "/v1.0/card/instances/createAndDeliver", body, "card createAndDeliver");
    return outTrackId;
  }

  /** Replaces the streamed markdown with `text` (whole reply so far); finalizes or fails the card when asked. */
  async stream(outTrackId: string, text: string, end: { finalize?: boolean; error?: boolean } = {}): Promise<void> {
    const body = {
      outTrackId,
      guid: randomUUID(),
      key: this.settings.contentKey,
      content: toDingTalkMarkdown(text),
      isFull: true,
      isFinalize: end.finalize === true,
      isError: end.error === true,
    };
    await this.api.call("PUT", "/v1.0/card/streaming", body, "card streaming");
  }

  /** Updates card variables by key (other variables keep their values). */
  async update(outTrackId: string, cardParamMap: Record<string, string>): Promise<void> {
    const body = { outTrackId, cardData: { cardParamMap }, cardUpdateOptions: { updateCardDataByKey: true } };
    await this.api.call("PUT", "/v1.0/card/instances", body, "card update");
  }
}
