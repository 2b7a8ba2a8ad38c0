/**
 * Card JSON 2.0 for the messages Antler sends: a markdown body, optional callback buttons, and
 * the streaming card CardKit types into. Button values carry what a click needs to find its
 * conversation again (the topic root), because `card.action.trigger` only names the card.
 */
import type { ButtonSpec, ConversationRef, JsonValue, ProgressContent } from "../types.js";
import { toCardMarkdown } from "./format.js";
import { progressElement } from "./progress.js";

/** `element_id` of the markdown element a streaming card types into. */
export const STREAM_ELEMENT_ID = "reply_md";

/** The callback value of one button, kept compact (it rides in every click event). */
export interface ButtonValue {
  /** Question id. */
  q: string;
  /** Button id. */
  b: string;
  /** Chat type the question was asked in: `p` (p2p) or `g` (group). */
  c: "p" | "g";
  /** Topic root message id (groups). */
  t?: string;
  /** The button's label, shortened, for the toast that confirms the click. */
  l?: string;
}

export function buttonValue(ref: ConversationRef, questionId: string, button: ButtonSpec): ButtonValue {
  const value: ButtonValue = { q: questionId, b: button.id, c: ref.chatType === "group" ? "g" : "p" };
  if (ref.threadId) value.t = ref.threadId;
  value.l = button.label.length > 40 ? `${button.label.slice(0, 39)}…` : button.label;
  return value;
}

/** Reads a click's callback value, or undefined when it is not one of ours. */
export function readButtonValue(value: unknown): ButtonValue | undefined {
  const v = value as Partial<ButtonValue> | null;
  if (!v || typeof v !== "object" || typeof v.q !== "string" || typeof v.b !== "string") return undefined;
  const out: ButtonValue = { q: v.q, b: v.b, c: v.c === "g" ? "g" : "p" };
  if (typeof v.t === "string" && v.t) out.t = v.t;
  if (typeof v.l === "string") out.l = v.l;
  return out;
}

export interface CardButtons {
  buttons: ButtonSpec[];
  questionId: string;
}

/**
 * An interactive card that `PATCH /im/v1/messages/:id` may replace later (`update_multi`): the
 * text, the progress section under it (progress.ts), then the buttons.
 */
export function messageCard(
  ref: ConversationRef,
  markdown: string,
  buttons?: CardButtons,
  progress?: ProgressContent,
): Record<string, unknown> {
  const elements: unknown[] = [{ tag: "markdown", content: toCardMarkdown(markdown) || " " }];
  const section = progressElement(progress);
  if (section) elements.push(section);
  for (const spec of buttons?.buttons ?? []) {
    elements.push({
      tag: "button",
      text: { tag: "plain_text", content: spec.label },
      type: "default",
      behaviors: [{ type: "callback", value: buttonValue(ref, buttons?.questionId ?? "", spec) }],
    });
  }
  return { schema: "2.0", config: { update_multi: true }, body: { elements } };
}

/** The card a CardKit stream starts from: streaming mode on, one empty markdown element. */
export function streamingCard(): Record<string, unknown> {
  return {
    schema: "2.0",
    config: {
      update_multi: true,
      streaming_mode: true,
      summary: { content: "…" },
    },
    body: { elements: [{ tag: "markdown", element_id: STREAM_ELEMENT_ID, content: "" }] },
  };
}

/** Buttons as stored in a handle, so an edit without `buttons` keeps the old ones. */
export function storedButtons(content: { buttons?: ButtonSpec[]; questionId?: string }): JsonValue | undefined {
  if (!content.buttons?.length) return undefined;
  return { q: content.questionId ?? "", list: content.buttons.map((b) => ({ id: b.id, label: b.label })) };
}

export function restoreButtons(stored: JsonValue | undefined): CardButtons | undefined {
  const s = stored as { q?: unknown; list?: unknown } | undefined;
  if (!s || typeof s.q !== "string" || !Array.isArray(s.list)) return undefined;
  const buttons = (s.list as Array<{ id?: unknown; label?: unknown }>)
    .filter((b) => typeof b.id === "string" && typeof b.label === "string")
    .map((b) => ({ id: b.id as string, label: b.label as string }));
  return { questionId: s.q, buttons };
}
