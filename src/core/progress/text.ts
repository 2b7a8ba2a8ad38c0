/**
 * The progress view as text, for channels that do not show it themselves: Markdown lines the
 * core puts under the reply's streaming text, and the summary line of the final message.
 *
 * - compact: one italic line, `⏳ _Searching the web…_`;
 * - full: one line per row, at most {@link MAX_ROWS} (the rest counted, "… and 4 more"):
 *   `✓ web_search · "antler docs" · 1.2 s`, `⏳ run_tests · Running tests (2/5)`, plan steps as
 *   `☑`/`☐` (the current one in bold), `⏸ waiting for approval: send_email · …`, and the
 *   headline in italics when no row is running ("Thinking…");
 * - reasoning (when on): a quote of its last {@link REASONING_SHOWN} characters, `> 💭 …`.
 *   The core's Markdown has no way to fold a block on every emitter, so it is a short tail.
 *
 * What the tools and the model wrote is escaped (`literal`), so it shows as written.
 */

import { formatDuration } from "../../channels/kit/progress.js";
import type { ProgressContent, ProgressRow } from "../../channels/types.js";

/** A duration as people read it, the same on every platform (`1.2 s`, `41 s`, `2 min 5 s`). */
export { formatDuration };

/** Most rows the text view lists. */
export const MAX_ROWS = 8;
/** Characters of reasoning the text view quotes. */
export const REASONING_SHOWN = 200;

/** How text is written for one channel: escaped Markdown, or plain text as is. */
export interface TextStyle {
  /** `text` as Markdown that shows exactly `text`. */
  literal(text: string): string;
  /** Whether the channel shows Markdown (false: plain text, no emphasis markup). */
  markdown: boolean;
}

const ICONS: Record<ProgressRow["state"], string> = {
  running: "⏳",
  done: "✓",
  failed: "✗",
  pending: "☐",
  waiting: "⏸",
};

/** The live view as Markdown lines (empty when it shows nothing). */
export function progressText(view: ProgressContent, style: TextStyle): string {
  const blocks: string[] = [];
  const lines: string[] = view.mode === "full" ? rowLines(view.rows, style) : [];
  const busy = view.rows.some((r) => (r.state === "running" && r.kind !== "plan") || r.state === "waiting");
  if (view.headline && (view.mode === "compact" || !busy)) lines.push(`⏳ ${em(view.headline, style)}`);
  if (lines.length > 0) blocks.push(lines.join(style.markdown ? "  \n" : "\n"));
  if (view.reasoning) blocks.push(reasoningText(view.reasoning, style));
  return blocks.join("\n\n");
}

/** The compact form of a view: its headline alone (and the reasoning), for when the full list does not fit. */
export function compactText(view: ProgressContent, style: TextStyle): string {
  return progressText({ ...view, mode: "compact" }, style);
}

/** The final message's last line: `_3 tools, 41 s_`. */
export function summaryText(summary: string, style: TextStyle): string {
  return em(summary, style);
}

function rowLines(rows: ProgressRow[], style: TextStyle): string[] {
  const shown = pick(rows);
  const lines = shown.map((row) => rowLine(row, style));
  const more = rows.length - shown.length;
  if (more > 0) lines.push(style.literal(`… and ${more} more`));
  return lines;
}

/** Rows running or waiting first, then the newest others, up to {@link MAX_ROWS}; in their order. */
function pick(rows: ProgressRow[]): ProgressRow[] {
  if (rows.length <= MAX_ROWS) return rows;
  const busy = (r: ProgressRow) => r.state === "running" || r.state === "waiting";
  const keep = new Set<ProgressRow>();
  for (const r of rows) if (busy(r) && keep.size < MAX_ROWS) keep.add(r);
  for (let i = rows.length - 1; i >= 0 && keep.size < MAX_ROWS; i--) keep.add(rows[i]!);
  return rows.filter((r) => keep.has(r));
}

function rowLine(row: ProgressRow, style: TextStyle): string {
  const parts: string[] = [];
  if (row.kind === "plan") {
    const title = style.literal(row.title);
    if (row.state === "done") return `☑ ${title}`;
    return row.state === "running" && style.markdown ? `☐ **${title}**` : `☐ ${title}`;
  }
  if (row.kind === "approval") parts.push(`waiting for approval: ${row.title}`);
  else parts.push(row.kind === "task" ? `subagent: ${row.title}` : row.title);
  if (row.detail) parts.push(row.detail);
  if (row.durationMs !== undefined) parts.push(formatDuration(row.durationMs));
  return `${ICONS[row.state]} ${style.literal(parts.join(" · "))}`;
}

function reasoningText(reasoning: string, style: TextStyle): string {
  const flat = reasoning.replace(/\s+/g, " ").trim();
  const tail = flat.length > REASONING_SHOWN ? `…${flat.slice(-REASONING_SHOWN).trimStart()}` : flat;
  return style.markdown ? `> 💭 ${style.literal(tail)}` : `💭 ${tail}`;
}

function em(text: string, style: TextStyle): string {
  return style.markdown ? `_${style.literal(text)}_` : text;
}
