/**
 * Buttons on Slack: Block Kit for questions (the text in section blocks, then one actions block
 * of buttons), and the button codec: every `action_id` starts with {@link ACTION_PREFIX}, and
 * the value carries the question and button ids.
 */
import type { ButtonSpec } from "../types.js";

/** Prefix of every `action_id` the adapter puts on a button. */
export const ACTION_PREFIX = "antler:";

/** Slack's limits: section text 3,000 characters, button label 75, 25 elements per actions block. */
const SECTION_MAX = 3000;
const LABEL_MAX = 75;
export const MAX_BUTTONS = 25;

export type Block = Record<string, unknown>;

/** Section blocks holding `mrkdwn`, cut at line breaks where possible. */
export function sectionBlocks(mrkdwn: string): Block[] {
  const out: Block[] = [];
  let rest = mrkdwn;
  while (rest.length > 0) {
    let cut = rest.length <= SECTION_MAX ? rest.length : rest.lastIndexOf("\n", SECTION_MAX);
    if (cut <= 0) cut = Math.min(rest.length, SECTION_MAX);
    out.push({ type: "section", text: { type: "mrkdwn", text: rest.slice(0, cut) } });
    rest = rest.slice(cut).replace(/^\n/, "");
  }
  return out;
}

/** The whole message: text sections plus the buttons, each with its own `action_id`. */
export function questionBlocks(mrkdwn: string, questionId: string, buttons: ButtonSpec[]): Block[] {
  const elements = buttons.slice(0, MAX_BUTTONS).map((b) => ({
    type: "button",
    action_id: `${ACTION_PREFIX}${b.id}`,
    text: { type: "plain_text", text: b.label.length > LABEL_MAX ? `${b.label.slice(0, LABEL_MAX - 1)}…` : b.label },
    value: encodeButtonValue(questionId, b.id),
  }));
  return [...sectionBlocks(mrkdwn || " "), { type: "actions", block_id: `antler_q_${questionId}`.slice(0, 255), elements }];
}

/** Decodes the value the adapter put on a button: `{"q": questionId, "b": buttonId}`. */
export function decodeButtonValue(value: string | undefined): { questionId: string; buttonId: string } | undefined {
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(value) as { q?: unknown; b?: unknown };
    if (typeof parsed.q === "string" && typeof parsed.b === "string") return { questionId: parsed.q, buttonId: parsed.b };
  } catch {
    // not one of ours
  }
  return undefined;
}

export function encodeButtonValue(questionId: string, buttonId: string): string {
  return JSON.stringify({ q: questionId, b: buttonId });
}
