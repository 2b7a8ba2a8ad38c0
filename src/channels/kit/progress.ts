/**
 * What every adapter that shows the progress view itself (`capabilities.progressView`, or a native
 * stream's `progress`) writes the same way: a row's icon and label, a duration, a row as one line
 * of Markdown, and the view as Markdown for a card section or a fallback. The words are the ones
 * the core writes under a text reply (src/core/progress/text.ts), so a row reads alike on every
 * platform: `✓ web_search · "antler docs" · 1.2 s`. The titles and details come from the agent's
 * tools, so they are made literal: `literalMarkdown` escapes what would be markup.
 */
import { literalMarkdown } from "../markdown/index.js";
import type { ProgressContent, ProgressRow } from "../types.js";

/** The mark before a row, by its state. */
export const STATE_ICON: Record<ProgressRow["state"], string> = {
  running: "⏳",
  done: "✓",
  failed: "✗",
  pending: "☐",
  waiting: "⏸",
};

/** Most rows a view written as text lists; the rest are counted ("… and 4 more"). */
export const MAX_TEXT_ROWS = 8;

/** A row's mark: its state's, and a box for a plan step (ticked once done). */
export function rowIcon(row: ProgressRow): string {
  if (row.kind === "plan") return row.state === "done" ? "☑" : "☐";
  return STATE_ICON[row.state];
}

/** What a row is called: a tool's name, `subagent: <task>`, `waiting for approval: <tool>`, a plan step. */
export function rowLabel(row: ProgressRow): string {
  const title = oneLine(row.title);
  if (row.kind === "approval") return `waiting for approval: ${title}`;
  if (row.kind === "task") return `subagent: ${title}`;
  return title;
}

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

/** One row as a line of Markdown: `✓ web_search · "antler" · 1.2 s`; a plan step `☐ **now**` while it runs. */
export function rowMarkdown(row: ProgressRow): string {
  if (row.kind === "plan") {
    const title = literalMarkdown(oneLine(row.title));
    return `${rowIcon(row)} ${row.state === "running" ? `**${title}**` : title}`;
  }
  const parts = [rowLabel(row)];
  if (row.detail) parts.push(oneLine(row.detail));
  if (row.durationMs !== undefined && rowEnded(row)) parts.push(formatDuration(row.durationMs));
  return `${rowIcon(row)} ${literalMarkdown(parts.join(" · "))}`;
}

/** Rows running or waiting first, then the newest others, up to `max`, in their order. */
export function pickRows(rows: ProgressRow[], max: number): ProgressRow[] {
  if (rows.length <= max) return rows;
  const busy = (r: ProgressRow) => r.state === "running" || r.state === "waiting";
  const keep = new Set<ProgressRow>();
  for (const r of rows) if (busy(r) && keep.size < max) keep.add(r);
  for (let i = rows.length - 1; i >= 0 && keep.size < max; i--) keep.add(rows[i] as ProgressRow);
  return rows.filter((r) => keep.has(r));
}

/** The rows of a `full` view as Markdown lines, at most `max` ("… and N more" after), or [] in `compact`. */
export function rowLines(view: ProgressContent, max = MAX_TEXT_ROWS): string[] {
  if (view.mode !== "full") return [];
  const shown = pickRows(view.rows, max);
  const lines = shown.map(rowMarkdown);
  const more = view.rows.length - shown.length;
  if (more > 0) lines.push(literalMarkdown(`… and ${more} more`));
  return lines;
}

/** The headline (or summary) as a Markdown line, marked running (`⏳`) or ended (`✓`). */
export function titleMarkdown(view: ProgressContent): string {
  const title = progressTitle(view);
  if (!title) return "";
  return `${progressEnded(view) ? "✓" : "⏳"} ${literalMarkdown(oneLine(title))}`;
}

/** The rows as Markdown lines with hard breaks (the `full` view), or "" in `compact` and when there are none. */
export function rowsMarkdown(view: ProgressContent): string {
  return rowLines(view).join("  \n");
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
