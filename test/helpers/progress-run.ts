/**
 * A run as the core's progress view describes it, step by step, for the channel tests that show
 * the view themselves: three tool calls that each run and end, the reply's text growing beside
 * them (each text begins with the one before, as a stream's does), and the final view with its
 * summary (or, with `summary: false`, none). What a channel gets is the same `ProgressContent`
 * the core builds (src/channels/types.ts).
 */
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { ProgressContent, ProgressRow } from "../../src/channels/types.js";
import type { MockModel } from "../../src/testing/mock-model.js";
import { sleep } from "../../src/testing/wait.js";

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

/** How long each of {@link slowTools} takes, as real tools do. */
export const TOOL_MS = 400;
/** The answer {@link enqueueThreeToolRun} ends with, after "Let me look. ". */
export const ANSWER = "The docs say pagination is cursor based, the fetch confirmed it, and all the tests pass on main.";

const slow = (name: string, schema: z.ZodObject<z.ZodRawShape>) =>
  tool(
    async () => {
      await sleep(TOOL_MS);
      return `${name} ok`;
    },
    { name, description: `The ${name} tool.`, schema },
  );

/** Three tools for a whole gateway's agent: web_search, fetch_url and run_tests, each taking {@link TOOL_MS}. */
export function slowTools() {
  return [
    slow("web_search", z.object({ query: z.string() })),
    slow("fetch_url", z.object({ url: z.string() })),
    slow("run_tests", z.object({ suite: z.string() })),
  ];
}

/** The mock model's side of a run through the core: a word, three tool calls, then (after a second) {@link ANSWER}, streamed. */
export function enqueueThreeToolRun(model: MockModel): void {
  model.enqueue(
    { text: "Let me look. ", toolCalls: [{ name: "web_search", args: { query: "antler pagination" } }] },
    { toolCalls: [{ name: "fetch_url", args: { url: "https://example.com/docs" } }] },
    { toolCalls: [{ name: "run_tests", args: { suite: "api" } }] },
    // The answer starts a moment after the last tool: the view with every row done stays up long
    // enough to be drawn even when a loaded machine slows the paced edits.
    { text: ANSWER, chunkSize: 4, delayMs: 25, firstByteMs: 1_000 },
  );
}
