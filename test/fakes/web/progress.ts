/**
 * The progress panel as the page shows it (public/progress.js), read from the wire: what a person
 * sees under a bot message while the agent works, and what is wrong with a view the page could
 * not show (a test expects none).
 */

export interface WireProgressRow {
  id: string;
  kind: string;
  icon: string;
  title: string;
  detail?: string;
  state: string;
  took?: string;
}

/** `progress` of a `message` or `edit` event; null (or absent on a message) = no panel. */
export interface WireProgress {
  mode: "compact" | "full";
  headline: string;
  summary?: string;
  reasoning?: string;
  rows: WireProgressRow[];
}

const STATES = new Set(["running", "done", "failed", "pending", "waiting"]);

/** What the panel reads as, line by line, as the page builds it; [] when there is none. */
export function panelLines(progress: WireProgress | null): string[] {
  if (!progress) return [];
  const ended = progress.headline === "";
  const lines = [`${ended ? "✓" : "⏳"} ${progress.headline || progress.summary || ""}`];
  if (progress.mode === "full") {
    for (const row of progress.rows) {
      lines.push([row.icon, row.title, row.detail, row.took].filter(Boolean).join(" "));
    }
  }
  if (progress.reasoning) lines.push("Reasoning");
  return lines;
}

/** Why the page could not show this view, if it could not. */
export function progressProblems(progress: unknown): string[] {
  if (progress === null || progress === undefined) return [];
  const p = progress as Partial<WireProgress>;
  const out: string[] = [];
  if (p.mode !== "compact" && p.mode !== "full") out.push(`progress.mode is ${String(p.mode)}`);
  if (typeof p.headline !== "string") out.push("progress.headline is not a string");
  if (p.headline === "" && !p.summary) out.push("an ended view without a summary was sent instead of null");
  if (!Array.isArray(p.rows)) return [...out, "progress.rows is not a list"];
  for (const row of p.rows) {
    if (typeof row.id !== "string" || typeof row.title !== "string")
      out.push(`a row without id or title: ${JSON.stringify(row)}`);
    if (!STATES.has(row.state)) out.push(`row ${row.id} has state ${row.state}`);
    if (typeof row.icon !== "string" || row.icon === "") out.push(`row ${row.id} has no icon`);
    if (row.took !== undefined && row.state !== "done" && row.state !== "failed")
      out.push(`row ${row.id} took time while ${row.state}`);
  }
  return out;
}
