/**
 * Dangling-tool-call repair. A run cancelled or crashed between the model asking for tools and
 * the tools answering leaves an assistant message whose tool calls have no results; providers
 * reject such a history (OpenAI answers HTTP 400). Before each model call this patches the
 * request with a placeholder result for every unanswered call. The stored state is left alone.
 */
import { type BaseMessage, isAIMessage, isToolMessage, ToolMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";

export const DANGLING_TOOL_CALLS = "DanglingToolCalls";

const PLACEHOLDER = "The tool call was interrupted before it returned a result.";

/** Inserts a placeholder ToolMessage right after each assistant message whose calls went unanswered. */
export function patchDanglingToolCalls(messages: readonly BaseMessage[]): BaseMessage[] {
  const answered = new Set(messages.filter(isToolMessage).map((m) => m.tool_call_id));
  const out: BaseMessage[] = [];
  let i = 0;
  while (i < messages.length) {
    const message = messages[i++] as BaseMessage;
    out.push(message);
    if (!isAIMessage(message) || !message.tool_calls?.length) continue;
    const missing = message.tool_calls.filter((c) => !c.id || !answered.has(c.id));
    if (missing.length === 0) continue;
    // Results that did arrive keep their place right after the call; the gaps are filled after them.
    while (i < messages.length && isToolMessage(messages[i] as BaseMessage)) out.push(messages[i++] as BaseMessage);
    for (const call of missing) {
      out.push(new ToolMessage({ content: PLACEHOLDER, tool_call_id: call.id ?? "", name: call.name, status: "error" }));
    }
  }
  return out;
}

export function danglingToolCallsMiddleware() {
  return createMiddleware({
    name: DANGLING_TOOL_CALLS,
    wrapModelCall: (request, handler) => handler({ ...request, messages: patchDanglingToolCalls(request.messages) }),
  });
}
