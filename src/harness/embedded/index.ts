/**
 * The `embedded` backend: the lead agent built from config (model, tools, MCP servers,
 * middleware; agent.ts), run in this process by the AgentHarness (harness.ts, run.ts).
 */
import type { BackendFactory } from "../backend-factory.js";
import { makeLeadAgent } from "./agent.js";
import { AgentHarness } from "./harness.js";

export const embeddedBackend: BackendFactory = async (parts) => {
  const { config, settings, baseDir, logger, onUsage, mcp, onClose } = parts;
  const lead = await makeLeadAgent(config, {
    agent: settings,
    baseDir,
    logger,
    tools: await parts.tools(),
    configTools: await parts.configTools(),
    checkpointer: await parts.checkpointer(),
    onUsage,
  });
  logger.info({ model: lead.modelName, tools: lead.toolNames }, "agent ready");
  return new AgentHarness({
    agent: lead.agent,
    modelName: lead.modelName,
    model: config.models.find((m) => m.name === lead.modelName),
    logger,
    recursionLimit: settings.recursion_limit,
    mcp,
    onUsage,
    onClose,
    tools: lead.tools,
  });
};
