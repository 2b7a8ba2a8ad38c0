/**
 * The `graph` backend: the user's own compiled graph, loaded by reflection from `agent.graph`
 * (load.ts) and run in this process by the embedded backend's AgentHarness, which reads a user's
 * graph's reply back from the thread's state.
 */
import { ConfigError } from "../../errors.js";
import type { BackendFactory } from "../backend-factory.js";
import { budgetOf } from "../embedded/configured-features.js";
import { AgentHarness } from "../embedded/harness.js";
import { loadUserGraph } from "./load.js";

export { type GraphFactoryArgs, loadUserGraph } from "./load.js";

export const graphBackend: BackendFactory = async (parts) => {
  const { config, settings, baseDir, logger, onUsage, onClose } = parts;
  const spec = settings.graph;
  if (!spec) {
    throw new ConfigError([{ path: `${parts.section ?? "agent"}.graph`, message: "is required when backend is graph" }]);
  }
  const graph = await loadUserGraph(spec, {
    baseDir,
    checkpointer: await parts.checkpointer(),
    config,
    ...(parts.store ? { store: await parts.store() } : {}),
    approvals: settings.approvals,
    budget: budgetOf(settings),
  });
  parts.onGraph?.(graph);
  logger.info({ graph: spec }, "agent ready");
  return new AgentHarness({
    agent: graph,
    backend: "graph",
    modelName: spec,
    logger,
    recursionLimit: settings.recursion_limit,
    onUsage,
    onClose,
  });
};
