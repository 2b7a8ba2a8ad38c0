/**
 * Summarization: langchain's built-in middleware, with Antler's defaults. When the history
 * grows past the trigger, older messages are replaced by a model-written summary. The summary
 * call's usage is reported as `summarization`.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ChatGeneration, LLMResult } from "@langchain/core/outputs";
import { summarizationMiddleware } from "langchain";
import { reportUsage, type UsageTarget, usageOf } from "../usage.js";

/** The name langchain gives its summarization middleware; usable as an anchor. */
export const SUMMARIZATION = "SummarizationMiddleware";

export interface SummarizationOptions {
  model: BaseChatModel;
  /** Summarize once the history is estimated above this many tokens. */
  triggerTokens?: number;
  /** Messages kept verbatim after a summary. */
  keepMessages?: number;
  /** Where the summary call's token usage goes. */
  usage?: UsageTarget;
}

export function antlerSummarizationMiddleware(options: SummarizationOptions) {
  return summarizationMiddleware({
    model: options.usage ? reportingModel(options.model, options.usage) : options.model,
    trigger: { tokens: options.triggerTokens ?? 8000 },
    keep: { messages: options.keepMessages ?? 20 },
  });
}

/**
 * The model bound to a handler that reports each answer's usage. langchain's middleware keeps the
 * answer to itself, so a callback is the one place to read it. The binding serves summaries only:
 * a handler costs a promise per streamed token, and the chat model's replies must not pay that.
 * The middleware only invokes the model (and reads limits from it only for fractional triggers,
 * which Antler does not use), so the binding stands in for the model.
 */
function reportingModel(model: BaseChatModel, usage: UsageTarget): BaseChatModel {
  const handler = BaseCallbackHandler.fromMethods({
    handleLLMEnd(output: LLMResult) {
      // A chat model's generations are ChatGenerations, each holding an answer message.
      for (const generation of output.generations.flat() as ChatGeneration[]) {
        reportUsage(usage, "summarization", usageOf(generation.message));
      }
    },
  });
  // Reported before the summary call returns, not from langchain's background queue.
  handler.awaitHandlers = true;
  return model.withConfig({ callbacks: [handler] }) as unknown as BaseChatModel;
}
