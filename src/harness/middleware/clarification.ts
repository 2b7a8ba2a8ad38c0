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
import { type AIMessage, ToolMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";
import { ASK_CLARIFICATION, askForClarification, normalizeClarification } from "../tools/clarification.js";
import { withToolCalls } from "./tool-calls.js";

export const CLARIFICATION = "Clarification";

/** The response with only its first `ask_clarification` call, when it has several. */
function firstQuestionOnly(response: AIMessage): AIMessage {
  const calls = response.tool_calls ?? [];
  const asks = calls.filter((c) => c.name === ASK_CLARIFICATION);
  if (asks.length < 2) return response;
  const first = asks[0];
  return withToolCalls(
    response,
    calls.filter((c) => c.name !== ASK_CLARIFICATION || c === first),
  );
}

export function clarificationMiddleware() {
  return createMiddleware({
    name: CLARIFICATION,
    // Inside the model node rather than an afterModel hook: a hook is a graph step of its own,
    // with a checkpoint of the whole thread, on every model turn.
    wrapModelCall: async (request, handler) => firstQuestionOnly(await handler(request)),
    wrapToolCall: (request, handler) => {
      if (request.toolCall.name !== ASK_CLARIFICATION) return handler(request);
      const answer = askForClarification(normalizeClarification(request.toolCall.args));
      return new ToolMessage({ content: answer, tool_call_id: request.toolCall.id ?? "", name: ASK_CLARIFICATION });
    },
  });
}
