/**
 * The `graph` backend's loader: `agent.graph` is a `"module:Export"` path (relative to the
 * config file) naming a compiled graph, a `createAgent` result, or a function that returns one.
 */
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import type { AgentMiddleware } from "langchain";
import type { AppConfig } from "../../config/schema.js";
import { ConfigError, errorMessage } from "../../errors.js";
import { resolveVariable } from "../../reflection/index.js";
import { type ApprovalRules, approvalMiddleware } from "../approvals.js";
import { compiledOf } from "../local-graph.js";
import { type RunBudget, tokenBudgetMiddleware } from "../middleware/token-budget.js";

/** What a graph factory named by `agent.graph` is given. */
export interface GraphFactoryArgs {
  /** Antler's checkpointer (SQLite at storage.path); use it unless the graph brings its own. */
  checkpointer: BaseCheckpointSaver;
  /** The whole loaded config, e.g. to build a model from `models:`. */
  config: AppConfig;
  /**
   * The tenant's LangGraph store, in the configured storage (SQLite or PostgreSQL), kept apart
   * from other tenants' as the checkpoints are: long-term data such as memory per person
   * (namespace `["memory", <user_id>]` holds what Antler's memory keeps). Compile with it
   * (`compile({ checkpointer, store })`, `createAgent({ store })`) so nodes and tools reach it as
   * `runtime.store`. A graph without a store of its own gets it anyway.
   */
  store?: BaseStore;
  /**
   * The agent's `approvals` as a middleware for a `createAgent` chain (put it before any
   * middleware that handles `ask_clarification`); absent when the agent has none. Its globs are
   * matched on each model turn against the tools the model called, so it needs no tool list. A
   * graph that builds its own approval (any interrupt with the `actionRequests`/`reviewConfigs`
   * shape) is handled the same way.
   */
  approvals?: AgentMiddleware;
  /**
   * The agent's `max_tool_calls_per_run` / `max_tokens_per_run` as a middleware for a `createAgent`
   * chain (token-budget.ts); absent when it has neither. A run it cuts short ends with a notice in the chat.
   */
  budget?: AgentMiddleware;
}

function graphError(spec: string, message: string): ConfigError {
  return new ConfigError([{ path: "agent.graph", message: `${message} (agent.graph is "${spec}")` }]);
}

/**
 * Loads `agent.graph` and returns the graph (or agent) it names, ready for `toLocalGraph`. A
 * factory is called with Antler's checkpointer, config, approval and budget middlewares; a graph without
 * a checkpointer gets Antler's, so its threads survive restarts. Every failure is a ConfigError naming `agent.graph`
 * and the fix.
 */
export async function loadUserGraph(
  spec: string,
  options: {
    baseDir: string;
    checkpointer: BaseCheckpointSaver;
    config: AppConfig;
    approvals?: ApprovalRules;
    budget?: RunBudget;
    store?: BaseStore;
  },
): Promise<object> {
  let value: unknown;
  try {
    value = await resolveVariable(spec, null, { baseDir: options.baseDir });
  } catch (err) {
    throw graphError(spec, `${errorMessage(err)}: fix the path, written "module:Export" relative to the config file`);
  }
  if (typeof value === "function" && !compiledOf(value)) {
    try {
      const approvals = approvalMiddleware(options.approvals ?? {});
      value = await (value as (args: GraphFactoryArgs) => unknown)({
        checkpointer: options.checkpointer,
        config: options.config,
        ...(approvals ? { approvals } : {}),
        ...(options.budget ? { budget: tokenBudgetMiddleware(options.budget) } : {}),
        ...(options.store ? { store: options.store } : {}),
      });
    } catch (err) {
      throw graphError(spec, `the graph factory failed: ${errorMessage(err)}`);
    }
  }
  const compiled = compiledOf(value);
  if (!compiled) {
    throw graphError(
      spec,
      "is not a compiled graph: export the result of StateGraph.compile() or createAgent(), or a function returning one",
    );
  }
  if (compiled.checkpointer && !given.has(compiled)) return value as object; // it brings its own
  // A module-level graph is one object per process, loaded by every tenant (and again after a
  // restart in tests): each load gets a copy holding this load's checkpointer.
  if (value === compiled && compiled.withConfig) {
    const copy = compiled.withConfig({});
    copy.checkpointer = options.checkpointer;
    if (options.store && !copy.store) copy.store = options.store;
    return copy;
  }
  // A createAgent() result keeps its graph private and cannot be copied: it takes this load's
  // checkpointer (the agent directory refuses to share one between tenants).
  compiled.checkpointer = options.checkpointer;
  if (options.store && !compiled.store) compiled.store = options.store;
  given.add(compiled);
  return value as object;
}

/** Graphs whose checkpointer Antler set. */
const given = new WeakSet<object>();
