/**
 * The three agent backends behind the one `Harness` contract, chosen by `agent.backend`:
 * - `embedded`: the lead agent built from config (model, tools, MCP servers, middleware);
 * - `graph`: the user's own compiled graph, loaded by reflection from `agent.graph`;
 * - `remote`: an agent on a LangGraph API server (`agent.remote`).
 * The local two keep checkpoints in the SQLite file at `storage.path`; a remote agent keeps its
 * own on its server.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type Database from "better-sqlite3";
import type { AppConfig } from "../config/schema.js";
import type { Logger } from "../log/logger.js";
import { openDatabase } from "../storage/sqlite.js";
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

/** The harness `agent.backend` names. */
export async function createAgentBackend(options: CreateHarnessOptions): Promise<Harness> {
  const { config, logger } = options;
  if (config.agent.backend === "remote" && config.agent.remote) {
    // The LangGraph SDK is loaded only for this backend.
    const { RemoteHarness } = await import("./remote/index.js");
    const harness = new RemoteHarness({ settings: config.agent.remote, logger, onUsage: options.onUsage });
    logger.info({ url: config.agent.remote.url, assistant: config.agent.remote.assistant_id }, "remote agent configured");
    return harness;
  }
  if (config.agent.backend === "graph" && config.agent.graph) return createGraphHarness(options, config.agent.graph);
  return createHarness(options);
}

/** Opens the checkpoint database (WAL) at storage.path. */
function openCheckpoints(config: AppConfig, baseDir: string): { db: Database.Database; file: string } {
  const file = path.resolve(baseDir, config.storage.path);
  mkdirSync(path.dirname(file), { recursive: true });
  return { db: openDatabase(file, config.storage.synchronous), file };
}

/** The `graph` backend: the user's graph, with Antler's SQLite checkpointer unless it has one. */
async function createGraphHarness(options: CreateHarnessOptions, spec: string): Promise<AgentHarness> {
  const { config, baseDir, logger } = options;
  const { db, file } = openCheckpoints(config, baseDir);
  try {
    const graph = await loadUserGraph(spec, { baseDir, checkpointer: new SqliteSaver(db), config });
    logger.info({ graph: spec, storage: file }, "harness ready");
    return new AgentHarness({
      agent: graph,
      backend: "graph",
      modelName: spec,
      logger,
      recursionLimit: config.agent.recursion_limit,
      onUsage: options.onUsage,
      onClose: () => {
        db.close();
      },
    });
  } catch (err) {
    db.close();
    throw err;
  }
}

/** The `embedded` backend: builds the lead agent from config. */
export async function createHarness(options: CreateHarnessOptions): Promise<AgentHarness> {
  const { config, baseDir, logger } = options;
  const { db, file } = openCheckpoints(config, baseDir);
  const extra = options.tools ?? [];
  let configTools: StructuredToolInterface[];
  try {
    configTools = await loadConfigTools(config.tools, { baseDir, logger });
  } catch (err) {
    db.close();
    throw err;
  }
  // MCP servers start in parallel, each bounded by its timeout; a failed one only loses its tools.
  // The names the model sees are the tools' own names, which may differ from their config names.
  const mcp = await McpServers.start(config.mcp_servers, {
    baseDir,
    logger,
    reservedNames: [...configTools, ...extra].map((t) => t.name).concat(ASK_CLARIFICATION),
  });
  try {
    const checkpointer = new SqliteSaver(db);
    const tools = [...extra, ...mcp.tools];
    const lead = await makeLeadAgent(config, { baseDir, logger, tools, configTools, checkpointer, onUsage: options.onUsage });
    logger.info({ model: lead.modelName, tools: lead.toolNames, storage: file }, "harness ready");
    return new AgentHarness({
      agent: lead.agent,
      modelName: lead.modelName,
      logger,
      recursionLimit: config.agent.recursion_limit,
      mcp,
      onUsage: options.onUsage,
      onClose: () => {
        db.close();
      },
    });
  } catch (err) {
    await mcp.close();
    db.close();
    throw err;
  }
}
