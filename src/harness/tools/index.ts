/**
 * Tools from config (`tools[].use`, each a StructuredTool instance), and the built-in `ask_clarification`.
 */
import { StructuredTool } from "@langchain/core/tools";
import type { ToolConfig } from "../../config/schema.js";
import type { Logger } from "../../log/logger.js";
import { resolveVariable } from "../../reflection/index.js";

export type { ClarificationRequest } from "./clarification.js";
export { ASK_CLARIFICATION, askClarificationTool, normalizeClarification } from "./clarification.js";

export interface LoadToolsOptions {
  /** Folder relative `use:` paths resolve against (the config file's folder). */
  baseDir?: string;
  logger?: Logger;
}

/** Resolves every configured tool. A tool whose own name differs from its config name only warns. */
export async function loadConfigTools(configs: readonly ToolConfig[], options: LoadToolsOptions = {}): Promise<StructuredTool[]> {
  const tools: StructuredTool[] = [];
  for (const config of configs) {
    const value = await resolveVariable<StructuredTool>(config.use, StructuredTool, { baseDir: options.baseDir });
    if (value.name !== config.name) {
      options.logger?.warn(
        { configured: config.name, actual: value.name, use: config.use },
        "tool name in config differs from the tool's own name; the model sees the tool's own name",
      );
    }
    tools.push(value);
  }
  return tools;
}

/** Drops tools whose name is already taken (the first wins) and reports the dropped names. */
export function dedupeTools<T extends { name: string }>(tools: readonly T[], logger?: Logger): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const t of tools) {
    if (seen.has(t.name)) {
      logger?.warn({ tool: t.name }, "duplicate tool name; keeping the first");
      continue;
    }
    seen.add(t.name);
    out.push(t);
  }
  return out;
}
