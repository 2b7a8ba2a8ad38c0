/**
 * A run as the core's progress view describes it, step by step, for the channel tests that show
 * the view themselves: three tool calls that each run and end, the reply's text growing beside
 * them (each text begins with the one before, as a stream's does), and the final view with its
 * summary (or, with `summary: false`, none). What a channel gets is the same `ProgressContent`
 * the core builds (src/channels/types.ts).
 */
import type { ProgressContent, ProgressRow } from "../../src/channels/types.js";

export interface RunStep {
  /** The reply's text so far. */
  text: string;
  progress: ProgressContent;
}

export const TOOLS = [
  { id: "call_1", title: "web_search", detail: '"antler gateway"', ms: 1200 },
  { id: "call_2", title: "read_file", detail: "README.md", ms: 300 },
  { id: "call_3", title: "run_tests", detail: "unit", ms: 41_000 },
] as const;

const HEADLINES = ["Searching the web…", "Reading README.md…", "Running tests…"];
/** The reply's final text; the views before it show it growing a word at a time. */
export const FINAL_TEXT = "All three steps are done.";
const WORDS = FINAL_TEXT.split(" ");

export interface RunOptions {
  mode?: ProgressContent["mode"];
  /** Keep the summary on the final view (default true). */
  summary?: boolean;
  /** Reasoning text the views carry (show_reasoning on). */
  reasoning?: string;
  /** The third tool fails instead of ending well. */
  fail?: boolean;
}

/** The views of a run with three tool calls: one while each runs, one after each ends, then the final one. */
export function threeToolRun(options: RunOptions = {}): RunStep[] {
  const mode = options.mode ?? "full";
  const rows: ProgressRow[] = [];
  const steps: RunStep[] = [];
  const view = (headline: string, text: string, extra: Partial<ProgressContent> = {}) => {
    const progress: ProgressContent = { mode, headline, rows: rows.map((r) => ({ ...r })), ...extra };
    if (options.reasoning) progress.reasoning = options.reasoning;
    steps.push({ text, progress });
  };
  const grown = (n: number) => WORDS.slice(0, n).join(" ");
  TOOLS.forEach((tool, i) => {
    rows.push({ id: tool.id, kind: "tool", title: tool.title, detail: tool.detail, state: "running" });
    view(HEADLINES[i] as string, grown(2 * i));
    const row = rows[i] as ProgressRow;
    row.state = options.fail && i === 2 ? "failed" : "done";
    row.durationMs = tool.ms;
    view(HEADLINES[i] as string, grown(2 * i + 1));
  });
  const failed = options.fail ? ", 1 failed" : "";
  view("", FINAL_TEXT, options.summary === false ? {} : { summary: `3 tools${failed}, 43 s` });
  return steps;
}
