/**
 * The backend registry: an agent's `backend` names the factory that builds its harness, one per
 * folder, all of one shape (`BackendFactory`, backend-factory.ts):
 * - `embedded` (embedded/): the lead agent built from config (model, tools, MCP servers, middleware);
 * - `graph` (graph/): the user's own compiled graph, loaded by reflection from `graph`;
 * - `remote` (remote/): an agent on a LangGraph API server (`remote`);
 * - any other value is `"module:Export"` of a class implementing `Harness` (use-backend.ts).
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
import type { AgentConfig, AppConfig, BuiltinBackend } from "../config/schema.js";
import type { Logger } from "../log/logger.js";
import { type Checkpoints, openCheckpoints } from "../storage/index.js";
import type { AgentParts, BackendFactory } from "./backend-factory.js";
import type { AgentHarness } from "./embedded/harness.js";
import { embeddedBackend } from "./embedded/index.js";
import { graphBackend } from "./graph/index.js";
import { McpServers } from "./mcp/index.js";
import { ASK_CLARIFICATION, loadConfigTools } from "./tools/index.js";
import type { Harness } from "./types.js";
import type { UsageSink } from "./usage.js";
import { useBackend } from "./use-backend.js";

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

export type { AgentParts, BackendFactory } from "./backend-factory.js";

/** The built-in backends; the remote one is imported when first used, so the LangGraph SDK loads only then. */
const FACTORIES: Readonly<Record<BuiltinBackend, () => Promise<BackendFactory>>> = {
  embedded: async () => embeddedBackend,
  graph: async () => graphBackend,
  remote: async () => (await import("./remote/index.js")).remoteBackend,
};

/** The factory `backend` names: a built-in one, or a class of your own (`"module:Export"`). */
export async function backendFactory(backend: string): Promise<BackendFactory> {
  return Object.hasOwn(FACTORIES, backend) ? FACTORIES[backend as BuiltinBackend]() : useBackend(backend);
}

/** Builds one agent of any backend from parts. */
export async function buildAgent(parts: AgentParts): Promise<Harness> {
  return (await backendFactory(parts.settings.backend))(parts);
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
      store: () => {
        checkpoints ??= openCheckpoints(config.storage, baseDir);
        return checkpoints.store();
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
