/**
 * A LangGraph server sends messages as JSON. These turn them back into LangChain messages, so the
 * translator, the reply and the repair code serve the remote backend as they serve local graphs.
 */
import {
  AIMessageChunk,
  type BaseMessage,
  coerceMessageLikeToMessage,
  isAIMessage,
  isToolMessage,
} from "@langchain/core/messages";
import { toClarification } from "../interrupts.js";
import { ASK_CLARIFICATION } from "../tools/clarification.js";
import type { Clarification } from "../types.js";

type Dict = Record<string, unknown>;

function isDict(value: unknown): value is Dict {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

function isMessageDict(value: unknown): value is Dict {
  return isDict(value) && typeof value.type === "string" && "content" in value;
}

/** One message from the wire; undefined for what is not one. */
export function toMessage(value: unknown): BaseMessage | undefined {
  if (!isMessageDict(value)) return undefined;
  try {
    return coerceMessageLikeToMessage(value as never);
  } catch {
    return undefined;
  }
}

/** The messages of a state or an update, as LangChain messages. */
export function messagesIn(values: unknown): BaseMessage[] {
  const list = isDict(values) ? values.messages : undefined;
  return Array.isArray(list) ? list.flatMap((m) => toMessage(m) ?? []) : [];
}

/**
 * A streamed `messages-tuple` part as the translator takes it: AI text as a chunk (the server
 * sends streamed tokens and whole node outputs alike as `type: "ai"`), with its
 * `additional_kwargs` (reasoning rides there), anything else as is.
 */
export function toStreamedMessage(value: unknown): BaseMessage | undefined {
  if (!isMessageDict(value)) return undefined;
  if (value.type === "ai" || value.type === "AIMessageChunk") {
    const kwargs = isDict(value.additional_kwargs) ? value.additional_kwargs : {};
    const id = typeof value.id === "string" ? value.id : undefined;
    return new AIMessageChunk({ content: value.content as never, id, additional_kwargs: kwargs });
  }
  return toMessage(value);
}

/** An `updates` part with every node's messages turned into LangChain messages. */
export function toUpdate(data: unknown): Record<string, unknown> {
  if (!isDict(data)) return {};
  const out: Record<string, unknown> = {};
  for (const [node, value] of Object.entries(data)) {
    out[node] = isDict(value) && Array.isArray(value.messages) ? { ...value, messages: messagesIn(value) } : value;
  }
  return out;
}

/**
 * A question that ended a run without an interrupt, as a DeerFlow server asks it: the last message
 * is the `ask_clarification` tool result, and the call before it holds the question's arguments.
 */
export function endedWithQuestion(messages: readonly BaseMessage[]): Clarification | undefined {
  const last = messages.at(-1);
  if (!last || !isToolMessage(last) || last.name !== ASK_CLARIFICATION) return undefined;
  for (let i = messages.length - 2; i >= 0; i--) {
    const m = messages[i];
    if (m && isAIMessage(m)) {
      const found = m.tool_calls?.find((c) => c.id === last.tool_call_id);
      if (found) return toClarification("", found.args);
    }
  }
  return toClarification("", last.text);
}
