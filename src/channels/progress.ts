/**
 * The progress view a reply carries while the agent works (src/core/progress/ builds it): what
 * a channel with `capabilities.progressView` shows beside the text, and a native stream beside
 * its streamed text.
 */

/** One row of the progress view: a tool call, a subagent task, a plan step or an approval that waits. */
export interface ProgressRow {
  /** Stable across updates of one reply (a tool call's id, a plan step's index). */
  id: string;
  kind: "tool" | "task" | "plan" | "approval";
  /** What it is, short: a tool's name ("web_search"), a task's or a step's title. */
  title: string;
  /** A short summary of its arguments or its latest progress text; capped and redacted. */
  detail?: string;
  state: "running" | "done" | "failed" | "pending" | "waiting";
  /** How long it ran, once it ended. */
  durationMs?: number;
}

/**
 * The live progress view of one reply (see src/core/progress/). `compact` shows only `headline`;
 * `full` shows `rows` as well. `summary` is set on the final message ("3 tools, 41 s") when the
 * view is kept as a summary; `reasoning` only when `show_reasoning` is on.
 */
export interface ProgressContent {
  mode: "compact" | "full";
  /** The current step, e.g. "Searching the web…"; empty once the run ended. */
  headline: string;
  rows: ProgressRow[];
  /** The model's reasoning text so far, to show collapsed where the platform can. */
  reasoning?: string;
  /** Set on the final content only: what the run did, in a few words. */
  summary?: string;
}
