/**
 * The `chunks` of Slack's streaming methods (chat.startStream / appendStream / stopStream), as
 * @slack/types 3.2 types them and Slack takes them: `markdown_text {text}`, `task_update {id,
 * title, status: pending|in_progress|complete|error, details?, output?, sources?}`, `plan_update
 * {title}` and `blocks {blocks ≤ 50}`. Slack refuses a request that carries both `markdown_text`
 * and `chunks` (vercel/chat#886, probed against the live API), and a chunk of an unknown type or
 * missing its fields. Long fields are accepted (the same probe: 40,000-character titles).
 *
 * What a person sees: each task card by id, its title and state as last updated. Whether a later
 * `details`/`output` replaces the earlier one or is added to it is not documented (the Python
 * SDK's own example sends a continuation starting with a newline), so the fake adds them: a
 * sender that repeats a field shows it twice here, and one that sends each once reads the same
 * either way.
 */
import { type Json, SlackApiError } from "./web-api.js";

export interface FakeTask {
  id: string;
  title: string;
  status: "pending" | "in_progress" | "complete" | "error";
  details: string;
  output: string;
  /** Every status the card went through, in order. */
  history: string[];
}

const STATUSES = new Set(["pending", "in_progress", "complete", "error"]);

/** The chunks of a streaming call, checked; undefined when it has none. Throws Slack's refusal. */
export function readChunks(a: Json): Json[] | undefined {
  if (a.chunks === undefined) return undefined;
  if (a.markdown_text !== undefined) throw new SlackApiError("invalid_arguments");
  const chunks = a.chunks;
  if (!Array.isArray(chunks) || chunks.length === 0) throw new SlackApiError("invalid_arguments");
  for (const chunk of chunks as Json[]) checkChunk(chunk);
  return chunks as Json[];
}

function checkChunk(c: Json): void {
  const str = (k: string) => typeof c[k] === "string" && (c[k] as string) !== "";
  const optional = (k: string) => c[k] === undefined || typeof c[k] === "string";
  switch (c?.type) {
    case "markdown_text":
      if (typeof c.text !== "string") throw new SlackApiError("invalid_arguments");
      return;
    case "task_update":
      if (!str("id") || !str("title") || !STATUSES.has(String(c.status))) throw new SlackApiError("invalid_arguments");
      if (!optional("details") || !optional("output")) throw new SlackApiError("invalid_arguments");
      if (c.sources !== undefined && !Array.isArray(c.sources)) throw new SlackApiError("invalid_arguments");
      return;
    case "plan_update":
      if (!str("title")) throw new SlackApiError("invalid_arguments");
      return;
    case "blocks":
      if (!Array.isArray(c.blocks) || c.blocks.length === 0 || c.blocks.length > 50) throw new SlackApiError("invalid_blocks");
      return;
    default:
      throw new SlackApiError("invalid_arguments");
  }
}

/** What the chunks change on a streaming message: its text, its plan's title, its task cards. */
export interface ChunkTarget {
  markdown?: string;
  plan?: string;
  tasks?: FakeTask[];
}

export function applyChunks(m: ChunkTarget, chunks: Json[]): void {
  for (const c of chunks) {
    if (c.type === "markdown_text") m.markdown = (m.markdown ?? "") + String(c.text);
    if (c.type === "plan_update") m.plan = String(c.title);
    if (c.type !== "task_update") continue;
    m.tasks ??= [];
    let task = m.tasks.find((t) => t.id === c.id);
    if (!task) {
      task = { id: String(c.id), title: "", status: "pending", details: "", output: "", history: [] };
      m.tasks.push(task);
    }
    task.title = String(c.title);
    task.status = c.status as FakeTask["status"];
    if (task.history.at(-1) !== task.status) task.history.push(task.status);
    if (typeof c.details === "string") task.details += c.details;
    if (typeof c.output === "string") task.output += c.output;
  }
}

const MARKS: Record<FakeTask["status"], string> = { pending: "○", in_progress: "⏳", complete: "✓", error: "✗" };

/** The task cards as a person reads them: `✓ web_search — "q" → 1.2 s`. */
export function taskLines(tasks: FakeTask[] | undefined): string[] {
  return (tasks ?? []).map((t) => {
    const details = t.details ? ` — ${t.details}` : "";
    const output = t.output ? ` → ${t.output}` : "";
    return `${MARKS[t.status]} ${t.title}${details}${output}`;
  });
}
