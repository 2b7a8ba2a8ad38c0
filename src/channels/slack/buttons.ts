/** Block Kit for questions: the text in section blocks, then one actions block of buttons. */
import type { ButtonSpec } from "../types.js";
import { ACTION_PREFIX, encodeButtonValue } from "./inbound.js";

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
