/**
 * The three agent backends behind the one `Harness` contract, chosen by an agent's `backend`:
 * - `embedded`: the lead agent built from config (model, tools, MCP servers, middleware);
 * - `graph`: the user's own compiled graph, loaded by reflection from `graph`;
 * - `remote`: an agent on a LangGraph API server (`remote`).
 * The local two keep checkpoints where the configured storage kind keeps them (src/storage/: the
 * SQLite file at `storage.path`, or the database at `storage.url`); a remote agent keeps its own
 * on its server.
 *
 * `buildAgent` builds one agent from parts its caller owns. `createAgentBackend` and
 * `createHarness` are the one-agent entry points (SDK use, tests): they open the database and
 * start the MCP servers themselves, and the harness they return releases both when closed. The
 * gateway builds every tenant's agents through the agent directory (directory.ts) instead.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { AgentConfig, AppConfig } from "../config/schema.js";
import type { Logger } from "../log/logger.js";
import { type Checkpoints, openCheckpoints } from "../storage/index.js";
import { makeLeadAgent } from "./agent.js";
import { loadUserGraph } from "./graph.js";
import { McpServers } from "./mcp/index.js";
import { AgentHarness } from "./runtime.js";
import { ASK_CLARIFICATION, loadConfigTools } from "./tools/index.js";
import type { Harness } from "./types.js";
import type { UsageSink } from "./usage.js";

export interface CreateHarnessOptions {
  config: AppConfig;
  /** Folder of the config file; storage.path and relative `use:` resolve against it. */
  baseDir: string;
  logger: Logger;
  /** Extra tools, besides the configured ones and those of `mcp_servers` (embedded backend only). */
  tools?: StructuredToolInterface[];
  /** Receives the token usage of every model call the agent makes (see usage.ts). */
  onUsage?: UsageSink;
}

/** Everything one agent is built from; the caller owns (and later releases) each part. */
export interface AgentParts {
  config: AppConfig;
  settings: AgentConfig;
  baseDir: string;
  logger: Logger;
  /** The checkpointer of a local agent; asked for only when the agent is local. */
  checkpointer: () => BaseCheckpointSaver | Promise<BaseCheckpointSaver>;
  /** The configured tools an embedded agent gets, already chosen. */
  configTools: () => Promise<StructuredToolInterface[]>;
  /** Further tools of an embedded agent (its MCP tools, extras). */
  tools: () => Promise<StructuredToolInterface[]>;
  onUsage?: UsageSink;
  /** MCP servers the harness owns and closes (one-agent use). */
  mcp?: McpServers;
  /** Called when the harness closes, after its runs stopped. */
  onClose?: () => void | Promise<void>;
  /** Sees a user's graph once loaded, before it is used (throw to refuse it). */
  onGraph?: (graph: object) => void;
}

/** Builds one agent of any backend from parts. */
export async function buildAgent(parts: AgentParts): Promise<Harness> {
  const { config, settings, baseDir, logger, onUsage, mcp, onClose } = parts;
  if (settings.backend === "remote" && settings.remote) {
    // The LangGraph SDK is loaded only for this backend.
    const { RemoteHarness } = await import("./remote/index.js");
    logger.info({ url: settings.remote.url, assistant: settings.remote.assistant_id }, "remote agent configured");
    return new RemoteHarness({ settings: settings.remote, logger, onUsage });
  }
  const recursionLimit = settings.recursion_limit;
  if (settings.backend === "graph" && settings.graph) {
    const graph = await loadUserGraph(settings.graph, {
      baseDir,
      checkpointer: await parts.checkpointer(),
      config,
      approvals: settings.approvals,
    });
    parts.onGraph?.(graph);
    logger.info({ graph: settings.graph }, "agent ready");
    return new AgentHarness({
      agent: graph,
      backend: "graph",
      modelName: settings.graph,
      logger,
      recursionLimit,
      onUsage,
      onClose,
    });
  }
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
    recursionLimit,
    mcp,
    onUsage,
    onClose,
    tools: lead.tools,
  });
}

/** The harness `agent.backend` names (the default agent), owning its database and MCP servers. */
export async function createAgentBackend(options: CreateHarnessOptions): Promise<Harness> {
  return createOwned(options, options.config.agent);
}

/** The `embedded` backend: builds the lead agent from config, owning its database and MCP servers. */
export async function createHarness(options: CreateHarnessOptions): Promise<AgentHarness> {
  return (await createOwned(options, { ...options.config.agent, backend: "embedded" })) as AgentHarness;
}

/** One agent whose harness opens and releases its own database and MCP servers. */
async function createOwned(options: CreateHarnessOptions, settings: AgentConfig): Promise<Harness> {
  const { config, baseDir, logger } = options;
  let checkpoints: Checkpoints | undefined;
  let mcp: McpServers | undefined;
  const extra = options.tools ?? [];
  const release = async () => {
    await mcp?.close();
    await checkpoints?.close();
  };
  try {
    const configTools =
      settings.backend === "embedded"
        ? chosenTools(config, settings, await loadConfigTools(config.tools, { baseDir, logger }))
        : [];
    if (settings.backend === "embedded") {
      // MCP servers start in parallel, each bounded by its timeout; a failed one only loses its tools.
      mcp = await McpServers.start(config.mcp_servers, {
        baseDir,
        logger,
        reservedNames: [...configTools, ...extra].map((t) => t.name).concat(ASK_CLARIFICATION),
      });
    }
    const started = mcp;
    return await buildAgent({
      config,
      settings,
      baseDir,
      logger,
      checkpointer: () => {
        checkpoints ??= openCheckpoints(config.storage, baseDir);
        return checkpoints.saver();
      },
      configTools: async () => configTools,
      tools: async () => [...extra, ...(started?.tools ?? [])],
      onUsage: options.onUsage,
      mcp,
      onClose: release,
    });
  } catch (err) {
    await release();
    throw err;
  }
}

/** The configured tools (`loaded`, in `tools:` order) an agent names; all of them when it names none. */
export function chosenTools<T>(config: AppConfig, settings: AgentConfig, loaded: T[]): T[] {
  const named = settings.tools;
  return named ? loaded.filter((_, i) => named.includes(config.tools[i]?.name ?? "")) : loaded;
}
