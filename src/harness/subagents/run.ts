/**
 * One subagent run: a fresh thread of the subagent's own agent, streamed to its end.
 *
 * It runs detached from the parent's run. A graph invoked inside a tool inherits the tool's
 * runnable config through async-local storage: the parent's callbacks (among them LangGraph's
 * `messages` stream handler and the steering watcher), its checkpointer and namespace, its run
 * control. LangGraph 1.7 leaves a nested graph's tokens out of the parent's `messages` stream
 * only while `subgraphs` is off, and it would still checkpoint the subagent into the parent's
 * thread. So the subagent starts with no inherited config at all: no checkpointer (nothing is
 * kept after the task), none of the parent's callbacks, only what is passed here: the abort
 * signal, the identity keys of the parent's `configurable` (its `thread_id` among them, so file
 * tools find the parent thread's folder) and the parent's `context`.
 *
 * What it does shows as progress of the parent's `task` call: each tool call the subagent makes
 * goes to the parent tool's `config.writer` with the task's call id. Each model turn's usage is
 * reported as `subagent` once it is seen, so a stopped subagent still reports what it used.
 */
import { type BaseMessage, HumanMessage, isAIMessage } from "@langchain/core/messages";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { reportUsage, type UsageTarget, usageOf } from "../usage.js";

/** The part of a compiled agent a subagent run uses. */
export interface SubagentGraph {
  stream(input: unknown, config: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
}

export interface SubagentRunOptions {
  signal: AbortSignal;
  recursionLimit: number;
  /** The parent run's `configurable`; only its own keys are passed on (see above). */
  parentConfigurable?: Record<string, unknown>;
  /** The parent run's `context` (the user's identity), passed on as is. */
  context?: unknown;
  /** Where a line about each step goes: the parent tool's progress. */
  progress?: (text: string) => void;
  usage?: UsageTarget;
}

/** Longest argument shown after a tool's name in a step's progress line. */
const HINT_CHARS = 60;

/** Runs `graph` on `prompt` and answers with the text of its last assistant message. */
export function runSubagent(graph: SubagentGraph, prompt: string, o: SubagentRunOptions): Promise<string> {
  // No store: the subagent does not see the parent's runnable config (see the file comment).
  return AsyncLocalStorageProviderSingleton.getInstance().run(undefined, () => drive(graph, prompt, o));
}

async function drive(graph: SubagentGraph, prompt: string, o: SubagentRunOptions): Promise<string> {
  const stream = await graph.stream(
    { messages: [new HumanMessage(prompt)] },
    {
      streamMode: "updates",
      signal: o.signal,
      recursionLimit: o.recursionLimit,
      configurable: ownKeys(o.parentConfigurable),
      ...(o.context !== undefined ? { context: o.context } : {}),
    },
  );
  const counted = new Set<string>();
  let answer = "";
  for await (const update of stream) {
    for (const message of messagesIn(update)) {
      if (!isAIMessage(message)) continue;
      if (!message.id || !counted.has(message.id)) {
        if (message.id) counted.add(message.id);
        reportUsage(o.usage, "subagent", usageOf(message));
        for (const call of message.tool_calls ?? []) o.progress?.(stepLine(call.name, call.args));
      }
      if (message.text.trim()) answer = message.text;
    }
  }
  return answer;
}

/** The parent's `configurable` without LangGraph's own keys (`__pregel_*`, `checkpoint_*`). */
function ownKeys(configurable: Record<string, unknown> | undefined): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(configurable ?? {}).filter(([key]) => !key.startsWith("__") && !key.startsWith("checkpoint")),
  );
}

/** Argument names whose values a progress line never shows (the chat redacts values that look like secrets too). */
const SECRET_KEY = /token|key|password|passwd|secret|auth|credential|cookie|signature/i;

/** `web_search: antler pagination`: the tool's name and its first text argument, on one line. */
export function stepLine(name: string, args: unknown): string {
  const first = Object.entries((args ?? {}) as Record<string, unknown>).find(
    ([key, v]) => typeof v === "string" && v.trim() && !SECRET_KEY.test(key),
  )?.[1];
  if (typeof first !== "string") return name;
  const flat = first.replace(/\s+/g, " ").trim();
  return `${name}: ${flat.length > HINT_CHARS ? `${flat.slice(0, HINT_CHARS - 1)}…` : flat}`;
}

/** The messages in one `updates` chunk, whatever node wrote them. */
function messagesIn(update: unknown): BaseMessage[] {
  if (!update || typeof update !== "object") return [];
  return Object.values(update).flatMap((value) => {
    const messages = (value as { messages?: unknown } | null)?.messages;
    return Array.isArray(messages) ? (messages as BaseMessage[]) : [];
  });
}
