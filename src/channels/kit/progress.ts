/**
 * What every adapter that shows the progress view itself (`capabilities.progressView`, or a native
 * stream's `progress`) writes the same way: a row's icon, a duration, a row as one line of
 * Markdown, and the view as Markdown for a card section or a fallback. The titles and details come
 * from the agent's tools, so they are made literal: `literalMarkdown` escapes what would be markup.
 */
import { literalMarkdown } from "../markdown/index.js";
import type { ProgressContent, ProgressRow } from "../types.js";

/** The mark before a row, by its state. */
export const STATE_ICON: Record<ProgressRow["state"], string> = {
  running: "⏳",
  done: "✓",
  failed: "✗",
  pending: "○",
  waiting: "✋",
};

/** States a row ends in: it will not change again. */
export function rowEnded(row: ProgressRow): boolean {
  return row.state === "done" || row.state === "failed";
}

/** A duration as people read it: `0.4 s`, `12 s`, `2 min 5 s`, `1 h 3 min`. */
export function formatDuration(ms: number): string {
  // Each unit is rounded before it is chosen, so 59.6 s reads "1 min", not "60 s".
  const tenths = Math.round(Math.max(0, ms) / 100);
  if (tenths < 100) return `${(tenths / 10).toFixed(1)} s`;
  const whole = Math.round(tenths / 10);
  if (whole < 60) return `${whole} s`;
  if (whole < 3600) {
    const rest = whole % 60;
    return `${Math.floor(whole / 60)} min${rest ? ` ${rest} s` : ""}`;
  }
  const minutes = Math.round(whole / 60);
  const rest = minutes % 60;
  return `${Math.floor(minutes / 60)} h${rest ? ` ${rest} min` : ""}`;
}

/** The line the view's top shows: the current step while the run goes, the summary once it ended. */
export function progressTitle(view: ProgressContent): string {
  return view.headline || view.summary || "";
}

/** Whether this is the final view of a run (the headline is empty once the run ended). */
export function progressEnded(view: ProgressContent): boolean {
  return view.headline === "";
}

/** Whether anything of the view is left to show: a live headline, or the summary kept once the run ended. */
export function progressShows(view: ProgressContent | undefined): view is ProgressContent {
  if (!view) return false;
  return !progressEnded(view) || Boolean(view.summary);
}

/** One row as a line of Markdown: `✓ web_search — "antler" · 1.2 s`. */
export function rowMarkdown(row: ProgressRow): string {
  const detail = row.detail ? ` — ${literalMarkdown(oneLine(row.detail))}` : "";
  const took = row.durationMs !== undefined && rowEnded(row) ? ` · ${formatDuration(row.durationMs)}` : "";
  return `${STATE_ICON[row.state]} ${literalMarkdown(oneLine(row.title))}${detail}${took}`;
}

/** One row as plain text, for surfaces that show no Markdown (a status line, a task title). */
export function rowText(row: ProgressRow): string {
  const detail = row.detail ? ` — ${oneLine(row.detail)}` : "";
  return `${oneLine(row.title)}${detail}`;
}

/** The headline (or summary) as a Markdown line, marked running (`⏳`) or ended (`✓`). */
export function titleMarkdown(view: ProgressContent): string {
  const title = progressTitle(view);
  if (!title) return "";
  return `${progressEnded(view) ? "✓" : "⏳"} ${literalMarkdown(oneLine(title))}`;
}

/** The rows as a Markdown list (the `full` view), or "" in `compact` and when there are none. */
export function rowsMarkdown(view: ProgressContent): string {
  if (view.mode !== "full" || view.rows.length === 0) return "";
  return view.rows.map((row) => `- ${rowMarkdown(row)}`).join("\n");
}

/**
 * The whole view as Markdown, for platforms that show it as text beside the reply (a card
 * variable, a message edited whole): the title line, then the rows. Reasoning is left out: it
 * goes only where it can be collapsed.
 */
export function progressMarkdown(view: ProgressContent): string {
  return [titleMarkdown(view), rowsMarkdown(view)].filter(Boolean).join("\n\n");
}

/**
 * The view as lines of text beside a reply that cannot fold (a card variable, a plain message):
 * the whole view while the run goes, the summary line alone once it ended, "" when nothing is
 * left to show.
 */
export function progressLines(view: ProgressContent | undefined): string {
  if (!progressShows(view)) return "";
  return progressEnded(view) ? titleMarkdown(view) : progressMarkdown(view);
}

/** The end of a long reasoning text, at most `max` characters, marked as cut when it was. */
export function reasoningTail(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  return `…${trimmed.slice(trimmed.length - max + 1)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}
