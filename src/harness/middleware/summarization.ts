/**
 * Summarization: langchain's built-in middleware, with Antler's defaults. When the history
 * grows past the trigger, older messages are replaced by a model-written summary.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { summarizationMiddleware } from "langchain";

/** The name langchain gives its summarization middleware; usable as an anchor. */
export const SUMMARIZATION = "SummarizationMiddleware";

export interface SummarizationOptions {
  model: BaseChatModel;
  /** Summarize once the history is estimated above this many tokens. */
  triggerTokens?: number;
  /** Messages kept verbatim after a summary. */
  keepMessages?: number;
}

export function antlerSummarizationMiddleware(options: SummarizationOptions) {
  return summarizationMiddleware({
    model: options.model,
    trigger: { tokens: options.triggerTokens ?? 8000 },
    keep: { messages: options.keepMessages ?? 20 },
  });
}
