/**
 * The `embedded` backend: the lead agent built from config (model, tools, MCP servers,
 * middleware; agent.ts), run in this process by the AgentHarness (harness.ts, run.ts).
 */
import type { ModelConfig } from "../../config/schema.js";
import type { Logger } from "../../log/logger.js";
import type { BackendFactory } from "../backend-factory.js";
import { endpointForLog } from "../models/index.js";
import { blocksAgent, probeModel } from "../models/probe.js";
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
    tenant: parts.tenant,
    section: parts.section,
    ...(parts.store ? { store: parts.store } : {}),
  });
  const model = config.models.find((m) => m.name === lead.modelName);
  void announceAgent(logger, { section: parts.section ?? "agent", model, modelName: lead.modelName, tools: lead.toolNames });
  return new AgentHarness({
    agent: lead.agent,
    modelName: lead.modelName,
    model,
    logger,
    recursionLimit: settings.recursion_limit,
    mcp,
    onUsage,
    onClose,
    tools: lead.tools,
    ...(lead.memory ? { memory: lead.memory } : {}),
  });
};

interface Announced {
  section: string;
  model: ModelConfig | undefined;
  modelName: string;
  tools: string[];
}

/**
 * Says whether the agent can answer, once its model's endpoint answered the probe: "agent ready"
 * when it did (or when there is no base_url to ask), else one warning that names the problem and
 * the key to fix. It runs beside start-up, so an unreachable model does not hold the gateway up.
 */
async function announceAgent(logger: Logger, a: Announced): Promise<void> {
  const fields = {
    section: a.section,
    model: a.modelName,
    model_id: a.model?.model,
    base_url: endpointForLog(a.model?.base_url),
  };
  const probe = a.model ? await probeModel(a.model) : undefined;
  if (probe && blocksAgent(probe.outcome))
    logger.warn({ ...fields, problem: probe.detail }, "agent not ready: its model cannot answer");
  else logger.info({ ...fields, tools: a.tools }, "agent ready");
}
