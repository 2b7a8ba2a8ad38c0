/**
 * Message-id guard. LangChain copies a completion's id into the AI message id, and the
 * `messages` reducer replaces any earlier message with the same id. A backend that reuses
 * completion ids would so overwrite history without a trace. This gives a fresh id to a model
 * response whose id is already taken, before it reaches the state.
 */
import { randomUUID } from "node:crypto";
import { AIMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";

export const MESSAGE_ID_GUARD = "MessageIdGuard";

export function messageIdGuardMiddleware() {
  return createMiddleware({
    name: MESSAGE_ID_GUARD,
    wrapModelCall: async (request, handler) => {
      const response = await handler(request);
      if (!AIMessage.isInstance(response) || !response.id) return response;
      const taken = request.state.messages.some((m) => m.id === response.id);
      if (!taken) return response;
      return new AIMessage({ ...response, id: `${response.id}-${randomUUID()}` });
    },
  });
}
