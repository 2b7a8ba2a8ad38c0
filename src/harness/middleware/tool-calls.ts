/** Helpers for middlewares that rewrite a model response's tool calls. */
import { AIMessage, type ToolCall } from "@langchain/core/messages";

/** A copy of `message` (same id, text, metadata and usage) with `calls` as its tool calls, and `metadata` added. */
export function withToolCalls(message: AIMessage, calls: ToolCall[], metadata?: Record<string, unknown>): AIMessage {
  // The provider's raw tool calls would be parsed back into tool_calls: drop them.
  const { tool_calls: _raw, ...kwargs } = message.additional_kwargs ?? {};
  return new AIMessage({
    content: message.content,
    id: message.id,
    name: message.name,
    additional_kwargs: kwargs,
    response_metadata: metadata ? { ...message.response_metadata, ...metadata } : message.response_metadata,
    usage_metadata: message.usage_metadata,
    tool_calls: calls,
  });
}
