/**
 * `agent.subagents` → the setup of the `task` tool: each subagent's model (a `models:` entry, or
 * the lead agent's model) and tools (names of the lead agent's own tools: a subagent never gets a
 * tool its agent was not given, and never `ask_clarification`, as it cannot ask the user).
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { AgentConfig, AppConfig } from "../../config/schema.js";
import { ConfigError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { createChatModel } from "../models/index.js";
import type { SubagentSpec, SubagentsSetup } from "./types.js";

export interface SubagentSetupOptions {
  /** The lead agent's tools, by which subagents' `tools:` are resolved. */
  tools: readonly StructuredToolInterface[];
  /** The lead agent's `models:` entry: a subagent naming it shares the lead's model instance. */
  leadModel: string;
  recursionLimit: number;
  baseDir?: string;
  logger?: Logger;
}

/** The setup for `agent`'s subagents; a tool name the agent does not have is a ConfigError. */
export async function subagentSetup(config: AppConfig, agent: AgentConfig, o: SubagentSetupOptions): Promise<SubagentsSetup> {
  const { subagents } = agent;
  const byName = new Map(o.tools.map((t) => [t.name, t]));
  const agents: SubagentSpec[] = [];
  for (const [name, sub] of Object.entries(subagents.agents)) {
    const ownModel = sub.model && sub.model !== o.leadModel;
    agents.push({
      name,
      description: sub.description,
      systemPrompt: sub.system_prompt,
      ...(ownModel ? { model: await createChatModel(config, sub.model, { baseDir: o.baseDir, logger: o.logger }) } : {}),
      modelName: sub.model ?? o.leadModel,
      tools: sub.tools ? sub.tools.map((tool, i) => pick(byName, tool, `subagents.agents.${name}.tools[${i}]`)) : [...o.tools],
      ...(sub.timeout_ms ? { timeoutMs: sub.timeout_ms } : {}),
    });
  }
  return { agents, maxConcurrent: subagents.max_concurrent, timeoutMs: subagents.timeout_ms, recursionLimit: o.recursionLimit };
}

function pick(tools: Map<string, StructuredToolInterface>, name: string, path: string): StructuredToolInterface {
  const tool = tools.get(name);
  if (tool) return tool;
  const known = [...tools.keys()].join(", ") || "none";
  throw new ConfigError([
    {
      path,
      message: `the agent has no tool named "${name}" (its tools: ${known}): name one of them, or give the agent that tool`,
    },
  ]);
}
