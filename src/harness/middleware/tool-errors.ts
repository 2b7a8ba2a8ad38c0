/**
 * Tool-error handling: a tool that throws becomes an error ToolMessage the model can read, and
 * the run goes on. Interrupts and aborts are not errors and pass through untouched.
 */
import { ToolMessage } from "@langchain/core/messages";
import { isGraphBubbleUp } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { errorMessage } from "../../errors.js";

export const TOOL_ERRORS = "ToolErrors";

/** Longest error text handed back to the model; stack traces and huge payloads are cut. */
const MAX_ERROR_CHARS = 2000;

export function toolErrorsMiddleware() {
  return createMiddleware({
    name: TOOL_ERRORS,
    wrapToolCall: async (request, handler) => {
      try {
        return await handler(request);
      } catch (err) {
        if (isGraphBubbleUp(err) || request.runtime.signal?.aborted) throw err;
        const text = errorMessage(err).slice(0, MAX_ERROR_CHARS);
        return new ToolMessage({
          content: `Error: tool ${request.toolCall.name} failed: ${text}`,
          tool_call_id: request.toolCall.id ?? "",
          name: request.toolCall.name,
          status: "error",
        });
      }
    },
  });
}
