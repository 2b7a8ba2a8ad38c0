/**
 * Thread repair after a run failed or was cancelled, so the next run works. Two things can be
 * left behind: tool calls without results (providers reject such a history) and the text of a
 * half-streamed model turn that the user saw but the state never got. Both are written back
 * as ordinary messages.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, isAIMessage, isHumanMessage, isToolMessage, ToolMessage } from "@langchain/core/messages";
import type { LocalGraph } from "./local-graph.js";

/** Why a pending tool call was closed without running. */
export const CLOSED_CALL_TEXT = {
  failed: "The run stopped before this tool call returned a result.",
  abandoned: "The user did not answer this question and sent a new message instead.",
  /** `Harness.closePending` without a reason of its own: the person stopped the waiting calls (`/stop`). */
  stopped: "The user stopped this tool call (/stop) while it waited for approval, so it was not run.",
} as const;

/** Result messages for the unanswered tool calls of the newest assistant message. */
export function closeOpenCalls(messages: readonly BaseMessage[], text: string): ToolMessage[] {
  const lastAi = messages.findLast((m) => isAIMessage(m));
  if (!lastAi || !isAIMessage(lastAi) || !lastAi.tool_calls?.length) return [];
  const answered = new Set(messages.filter(isToolMessage).map((m) => m.tool_call_id));
  return lastAi.tool_calls
    .filter((c) => c.id && !answered.has(c.id))
    .map((c) => new ToolMessage({ content: text, tool_call_id: c.id ?? "", name: c.name, status: "error" }));
}

/**
 * Whether the turn whose text was streamed is in the state already. The graph runs ahead of the
 * reader of its stream, so a run stopped by its reader may have stored the turn it was reading.
 */
export function turnStored(messages: readonly BaseMessage[], text: string, id?: string): boolean {
  const since = messages.findLastIndex((m) => isHumanMessage(m)) + 1;
  // The message-id guard may have given the stored message a suffixed id.
  const sameId = (m: BaseMessage) => id === undefined || m.id === id || m.id?.startsWith(`${id}-`) === true;
  return messages.slice(since).some((m) => isAIMessage(m) && sameId(m) && m.text.startsWith(text));
}

/**
 * Writes repair messages to the thread: results for open tool calls (`text`, else the reason's
 * own) and, when given, the partial text of the turn that broke off. Returns how many messages
 * were added.
 */
export async function repairThread(
  graph: LocalGraph,
  threadId: string,
  options: { partialText?: string; partialId?: string; reason: keyof typeof CLOSED_CALL_TEXT; text?: string },
): Promise<number> {
  const config = { configurable: { thread_id: threadId } };
  const state = await graph.getState(config);
  const messages = ((state.values as { messages?: BaseMessage[] } | undefined)?.messages ?? []) as BaseMessage[];
  const repairs: BaseMessage[] = closeOpenCalls(messages, options.text ?? CLOSED_CALL_TEXT[options.reason]);
  if (options.partialText && !turnStored(messages, options.partialText, options.partialId)) {
    repairs.push(new AIMessage({ id: `partial-${randomUUID()}`, content: options.partialText }));
  }
  if (repairs.length === 0) return 0;
  // Written as if the tools node produced them: the graph then continues from the model node.
  // A graph without a tools node takes them as an update of whichever node ran last.
  await graph.updateState(config, { messages: repairs }, graph.hasNode("tools") ? "tools" : undefined);
  return repairs.length;
}
