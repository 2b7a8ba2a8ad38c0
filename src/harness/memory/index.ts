/**
 * Memory per person (`agent.features.memory`, `agent.memory`): a person's facts in the tenant's
 * LangGraph store (book.ts), read for facts after each turn (extract.ts), changed by the agent's
 * tools (tools.ts) and put into each model request by the middleware
 * (../middleware/memory.ts). `memoryFromConfig` builds what the middleware needs from an
 * agent's config.
 */
import type { BaseStore } from "@langchain/langgraph";
import type { AgentConfig, AppConfig } from "../../config/schema.js";
import type { Logger } from "../../log/logger.js";
import type { MemoryMiddlewareOptions } from "../middleware/memory.js";
import { createChatModel, selectModel } from "../models/index.js";
import type { UsageSink } from "../usage.js";
import { MemoryBook } from "./book.js";

export { type AppliedChanges, MemoryBook, type MemoryBookOptions, type MemoryChanges, namespaceOf } from "./book.js";
export { extractionPrompt, parseChanges, type TurnText, turnOf } from "./extract.js";
export { FORGET, memoryTools, personOf, REMEMBER, UPDATE_MEMORY } from "./tools.js";
export type { MemoryFact, PersonMemory } from "./types.js";

export interface MemoryFromConfigOptions {
  store: BaseStore;
  /** The agent's own model entry: the extraction's model when `memory.model` is unset. */
  agentModel: string;
  baseDir?: string;
  logger?: Logger;
  onUsage?: UsageSink;
}

/** The agent's memory: its book over `store`, and the extraction model (a `models[]` entry of its own, thinking off). */
export async function memoryFromConfig(
  config: AppConfig,
  agent: AgentConfig,
  options: MemoryFromConfigOptions,
): Promise<MemoryMiddlewareOptions & { book: MemoryBook }> {
  const settings = agent.memory;
  const book = new MemoryBook(options.store, {
    maxFacts: settings.max_facts,
    groups: settings.groups,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  if (!settings.extraction) return { book, extraction: false };
  const name = selectModel(config.models, settings.model || options.agentModel, options.logger).name;
  const model = await createChatModel(config, name, { baseDir: options.baseDir, logger: options.logger });
  return { book, model, extraction: true, ...(options.onUsage ? { usage: { sink: options.onUsage, model: name } } : {}) };
}
