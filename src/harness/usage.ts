/**
 * Token usage as the model reports it, per model call. The harness reports these kinds: `chat`
 * (the model turns of a run, read from the AI messages the run writes), `title` (the title
 * middleware's call), `summarization` (the summary call of the summarization middleware) and
 * `subagent` (the model turns of a subagent the `task` tool runs, under the subagent's model),
 * `memory` (the call that reads a finished turn for facts about the person).
 * Whoever builds the harness passes a `UsageSink`; the harness never stores or sums usage itself.
 */
import { type BaseMessage, isAIMessage } from "@langchain/core/messages";
import type { Usage } from "./types.js";

/** Why the model was called: a reply turn, the thread's title, a summary of old history, a subagent's turn (`task`), or facts to remember. */
export type UsageKind = "chat" | "title" | "summarization" | "subagent" | "memory";

/** The tokens one model call used, as the model reported them. */
export interface ModelUsage extends Usage {
  kind: UsageKind;
  /** The model's name as the harness knows it (its `modelName`: the `models[]` entry's name). */
  model: string;
}

/**
 * Receives each model call's usage as soon as the call's answer is seen. It runs inside the run,
 * so it must be quick and must not throw.
 */
export type UsageSink = (usage: ModelUsage) => void;

/** Where one model's calls report their usage: the sink and the name the model is reported under. */
export interface UsageTarget {
  sink: UsageSink;
  model: string;
}

/** A count as a model reported it; 0 for a missing or invalid one (a server's JSON may hold anything). */
function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/** The token counts a model's answer carries (`usage_metadata`); undefined when it has none. */
export function usageOf(message: BaseMessage): Usage | undefined {
  const reported = isAIMessage(message) ? message.usage_metadata : undefined;
  if (!reported) return undefined;
  return {
    inputTokens: count(reported.input_tokens),
    outputTokens: count(reported.output_tokens),
    totalTokens: count(reported.total_tokens),
  };
}

/** The sum of two usages; `total` may be absent (nothing counted yet). */
export function addUsage(total: Usage | undefined, more: Usage): Usage {
  return {
    inputTokens: (total?.inputTokens ?? 0) + more.inputTokens,
    outputTokens: (total?.outputTokens ?? 0) + more.outputTokens,
    totalTokens: (total?.totalTokens ?? 0) + more.totalTokens,
  };
}

/** Hands one call's usage to the target under `kind`; nothing when there is no target or no usage. */
export function reportUsage(target: UsageTarget | undefined, kind: UsageKind, usage: Usage | undefined): void {
  if (target && usage) target.sink({ kind, model: target.model, ...usage });
}
