/**
 * The shape every agent backend exports: a factory that builds one agent's harness from parts its
 * caller owns. The registry (backends.ts) maps `agent.backend` to the factories of embedded/,
 * graph/ and remote/, and to a class of your own (use-backend.ts).
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import type { AgentConfig, AppConfig } from "../config/schema.js";
import type { Logger } from "../log/logger.js";
import type { AgentFiles } from "./files.js";
import type { McpServers } from "./mcp/index.js";
import type { Harness } from "./types.js";
import type { UsageSink } from "./usage.js";

/** Everything one agent is built from; the caller owns (and later releases) each part. */
export interface AgentParts {
  config: AppConfig;
  settings: AgentConfig;
  /** Where `settings` sit in the config (`agent`, `agents.<name>`), for errors; `agent` when absent. */
  section?: string;
  /** The tenant this instance serves (its own skills join the shared ones); the default tenant when absent. */
  tenant?: string;
  baseDir: string;
  logger: Logger;
  /** The checkpointer of a local agent; asked for only when the agent is local. */
  checkpointer: () => BaseCheckpointSaver | Promise<BaseCheckpointSaver>;
  /**
   * The tenant's LangGraph store (memory per person; a user's graph's own long-term data), from
   * the same storage as the checkpointer; asked for only when the agent uses it.
   */
  store?: () => BaseStore | Promise<BaseStore>;
  /** The configured tools an embedded agent gets, already chosen. */
  configTools: () => Promise<StructuredToolInterface[]>;
  /** Further tools of an embedded agent (its MCP tools, extras). */
  tools: () => Promise<StructuredToolInterface[]>;
  onUsage?: UsageSink;
  /** The gateway's thread folders and file outbox, for a backend that brings files of its own (remote). */
  files?: AgentFiles;
  /** MCP servers the harness owns and closes (one-agent use). */
  mcp?: McpServers;
  /** Called when the harness closes, after its runs stopped. */
  onClose?: () => void | Promise<void>;
  /** Sees a user's graph once loaded, before it is used (throw to refuse it). */
  onGraph?: (graph: object) => void;
}

/** Builds one agent's harness; a config the backend cannot use is a ConfigError naming the key. */
export type BackendFactory = (parts: AgentParts) => Promise<Harness>;
