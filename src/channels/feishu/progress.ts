/**
 * The progress view as a section of the reply card, under the text: a card JSON 2.0
 * `collapsible_panel` when there is something to fold (the rows of `full`, the reasoning), whose
 * header is the current step (or the summary once the run ended); else one grey line of
 * notation-size markdown. Both carry the element id `progress`, so a CardKit stream can add,
 * replace and remove the section by it (stream.ts).
 */
import { progressEnded, progressShows, reasoningTail, rowLines, titleMarkdown } from "../kit/progress.js";
import { literalMarkdown } from "../markdown/index.js";
import type { ProgressContent } from "../types.js";
import { toCardMarkdown } from "./format.js";

/** `element_id` of the progress section (letters, digits and `_`, at most 20). */
export const PROGRESS_ELEMENT_ID = "progress";
/** Rows the panel lists at most (the rest are counted), and reasoning shown at most, from its end: a card must stay under 30 KB. */
const MAX_ROWS = 30;
const MAX_REASONING = 3000;

type Element = Record<string, unknown>;

/** The section for `view`, or undefined when nothing of it is left to show (the run ended without a summary). */
export function progressElement(view: ProgressContent | undefined): Element | undefined {
  if (!progressShows(view)) return undefined;
  const title = grey(toCardMarkdown(titleMarkdown(view)));
  // One row a line (card markdown keeps line breaks); the icons mark the rows, so no list bullets.
  const rows = rowLines(view, MAX_ROWS)
    .map((line) => grey(toCardMarkdown(line)))
    .join("\n");
  const reasoning = view.reasoning ? reasoningMarkdown(view.reasoning) : undefined;
  if (!rows && !reasoning) return { tag: "markdown", element_id: PROGRESS_ELEMENT_ID, text_size: "notation", content: title };
  const inside: Element[] = [];
  if (rows) inside.push(note(rows));
  if (reasoning && rows) inside.push(panel(grey("Reasoning"), [note(reasoning)], false));
  else if (reasoning) inside.push(note(reasoning));
  // Open while the rows change, so they are seen; folded to its header once the run ended.
  const expanded = Boolean(rows) && !progressEnded(view);
  return { ...panel(title, inside, expanded), element_id: PROGRESS_ELEMENT_ID };
}

function panel(title: string, elements: Element[], expanded: boolean): Element {
  return { tag: "collapsible_panel", expanded, header: { title: { tag: "markdown", content: title } }, elements };
}

function note(content: string): Element {
  return { tag: "markdown", text_size: "notation", content };
}

/** Grey text, one line of card markdown (a `<font>` tag does not span lines). */
function grey(line: string): string {
  return line ? `<font color='grey'>${line}</font>` : " ";
}

function reasoningMarkdown(text: string): string {
  return toCardMarkdown(literalMarkdown(reasoningTail(text, MAX_REASONING)));
}
