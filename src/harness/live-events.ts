/**
 * What a run shows while it works, besides its reply text: the progress a tool reports about
 * itself, and the model's reasoning. `RunTranslator` (run-events.ts) calls these for every
 * backend; the remote backend hands them the server's stream parts turned back into messages.
 *
 * Progress comes from LangGraph's `custom` stream mode: a tool (or any node) writes
 * `config.writer?.({ progress: "Running tests (2/5)" })`, or a plain string. It may add the id of
 * its call (`{ progress, id: config.toolCall?.id }`); without one, the call is known when exactly
 * one tool call of the run is open. Other custom chunks are not progress and are left alone.
 *
 * Reasoning comes in the shapes the pinned LangChain model classes give it on a streamed chunk:
 * OpenAI-compatible servers (DeepSeek, vLLM, Ollama, xAI, OpenRouter) as
 * `additional_kwargs.reasoning_content`; Anthropic as `{ type: "thinking", thinking }` content
 * blocks; the OpenAI Responses API and LangChain's own blocks as `{ type: "reasoning", reasoning }`.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunEvent } from "./types.js";

/** Longest progress text passed on; a tool's own text is a status line, not a log. */
export const PROGRESS_MAX_CHARS = 200;

type Progress = Extract<RunEvent, { type: "progress" }>;

/**
 * The progress event of one `custom` chunk, or undefined when the chunk is not progress.
 * `open`: the ids of the run's tool calls started and not yet ended, for a chunk without an id.
 */
export function progressOf(chunk: unknown, open: ReadonlySet<string>): Progress | undefined {
  let text: unknown = chunk;
  let id: unknown;
  if (chunk && typeof chunk === "object" && !Array.isArray(chunk)) {
    const c = chunk as { progress?: unknown; id?: unknown; toolCallId?: unknown };
    text = c.progress;
    id = c.id ?? c.toolCallId;
  }
  if (typeof text !== "string") return undefined;
  const flat = text.replace(/\s+/g, " ").trim();
  if (!flat) return undefined;
  const capped = flat.length <= PROGRESS_MAX_CHARS ? flat : `${flat.slice(0, PROGRESS_MAX_CHARS - 1).trimEnd()}…`;
  const known = typeof id === "string" && id ? id : open.size === 1 ? [...open][0] : undefined;
  return known ? { type: "progress", text: capped, id: known } : { type: "progress", text: capped };
}

/** The reasoning text one streamed model chunk carries; empty when it carries none. */
export function reasoningOf(message: BaseMessage): string {
  const { content } = message;
  if (Array.isArray(content)) {
    const fromBlocks = content.map(blockReasoning).join("");
    if (fromBlocks) return fromBlocks;
  }
  const kwargs = message.additional_kwargs as { reasoning_content?: unknown; reasoning?: unknown } | undefined;
  if (typeof kwargs?.reasoning_content === "string") return kwargs.reasoning_content;
  const summary = (kwargs?.reasoning as { summary?: unknown } | undefined)?.summary;
  if (Array.isArray(summary)) return summary.map((s) => (typeof s?.text === "string" ? s.text : "")).join("");
  return "";
}

function blockReasoning(block: unknown): string {
  if (!block || typeof block !== "object") return "";
  const b = block as { type?: unknown; thinking?: unknown; reasoning?: unknown };
  if (b.type === "thinking" && typeof b.thinking === "string") return b.thinking;
  if (b.type === "reasoning" && typeof b.reasoning === "string") return b.reasoning;
  return "";
}
