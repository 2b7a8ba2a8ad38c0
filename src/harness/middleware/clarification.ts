/**
 * Clarification: turns an `ask_clarification` tool call into a LangGraph interrupt, so the run
 * pauses and the caller gets the question; `Command({ resume: answer })` continues it and the
 * answer becomes the tool result the model reads. Always the last middleware of the chain (the
 * innermost tool wrapper), so no other wrapper code runs between the pause and the tool.
 *
 * On resume LangGraph re-runs the interrupted tool task from the start; nothing here has side
 * effects before `interrupt()`, so the replay is harmless. Only the first `ask_clarification`
 * of one model response is kept: one question at a time.
 */
import { AIMessage, isAIMessage, ToolMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";
import { ASK_CLARIFICATION, askForClarification, normalizeClarification } from "../tools/clarification.js";

export const CLARIFICATION = "Clarification";

export function clarificationMiddleware() {
  return createMiddleware({
    name: CLARIFICATION,
    afterModel: (state) => {
      const last = state.messages.at(-1);
      if (!last || !isAIMessage(last)) return undefined;
      const calls = last.tool_calls ?? [];
      const asks = calls.filter((c) => c.name === ASK_CLARIFICATION);
      if (asks.length < 2) return undefined;
      const first = asks[0];
      const kept = calls.filter((c) => c.name !== ASK_CLARIFICATION || c === first);
      const { tool_calls: _raw, ...kwargs } = last.additional_kwargs ?? {};
      return {
        messages: [
          new AIMessage({
            content: last.content,
            id: last.id,
            additional_kwargs: kwargs,
            response_metadata: last.response_metadata,
            usage_metadata: last.usage_metadata,
            tool_calls: kept,
          }),
        ],
      };
    },
    wrapToolCall: (request, handler) => {
      if (request.toolCall.name !== ASK_CLARIFICATION) return handler(request);
      const answer = askForClarification(normalizeClarification(request.toolCall.args));
      return new ToolMessage({ content: answer, tool_call_id: request.toolCall.id ?? "", name: ASK_CLARIFICATION });
    },
  });
}
