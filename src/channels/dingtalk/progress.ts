/**
 * The progress view in an AI card: DingTalk's card templates have no collapsible part Antler can
 * fill, so the view is text in a template variable of its own (`card_progress_key`), which the
 * template places and styles (e.g. small grey text under the reply). While the run goes it holds
 * the current step and, in `full`, the rows; once the run ended, the summary line alone (the card
 * cannot fold the rows away), or nothing. Reasoning is left out: it goes only where it can be
 * collapsed.
 */
import { progressLines } from "../kit/progress.js";
import type { ProgressContent } from "../types.js";
import { toDingTalkMarkdown } from "./format.js";

/** The variable's value for `view`: DingTalk markdown, or "" to clear it. */
export function progressValue(view: ProgressContent | undefined): string {
  return toDingTalkMarkdown(progressLines(view));
}
