/**
 * A reply cut off by a new message (follow-up mode `interrupt`, `RunOptions.interrupted`): the
 * next run starts with the partial reply as an assistant message marked as cut off, then the new
 * user message, so the model reads what the user saw and knows it was not finished.
 *
 * The stopped run's repair (repair.ts, remote/threads.ts) has usually stored the partial
 * already. Then its newest assistant message is marked in place (same id, the reducer replaces
 * it) instead of writing the text a second time; where that message carries tool calls, a
 * marker of its own follows. Only when the thread does not hold the partial is it written
 * whole. `Harness.history` and the title leave the mark out (`withoutCutOffMark`).
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, isAIMessage, isHumanMessage } from "@langchain/core/messages";

/** What the model reads after a reply that was cut off. */
export const CUT_OFF_MARK = "[reply cut off: the user sent a new message]";

const SUFFIX = `\n\n${CUT_OFF_MARK}`;

/** The text without the cut-off mark, for a person reading the thread again. */
export function withoutCutOffMark(text: string): string {
  if (text === CUT_OFF_MARK) return "";
  return text.endsWith(SUFFIX) ? text.slice(0, -SUFFIX.length) : text;
}

/** Whitespace-insensitive form, so a stored turn matches the text the stream showed. */
const flat = (text: string) => text.replace(/\s+/g, " ").trim();

/**
 * The assistant messages that go before the new user message: `partial` marked as cut off,
 * taking the thread's `messages` into account (see above). Empty for an empty partial.
 */
export function cutOffMessages(partial: string, messages: readonly BaseMessage[]): AIMessage[] {
  const seen = flat(partial);
  if (!seen) return [];
  const since = messages.slice(messages.findLastIndex((m) => isHumanMessage(m)) + 1);
  const stored = since.findLast((m) => isAIMessage(m) && flat(m.text) !== "");
  if (stored && seen.endsWith(flat(stored.text))) {
    const calls = isAIMessage(stored) ? (stored.tool_calls?.length ?? 0) : 0;
    if (calls === 0 && stored.id) return [new AIMessage({ id: stored.id, content: `${stored.text}${SUFFIX}` })];
    return [new AIMessage({ id: `cut-off-${randomUUID()}`, content: CUT_OFF_MARK })];
  }
  return [new AIMessage({ id: `cut-off-${randomUUID()}`, content: `${partial.trimEnd()}${SUFFIX}` })];
}
