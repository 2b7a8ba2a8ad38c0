/**
 * Agent factories. `createAntlerAgent` is the SDK factory: everything comes in as arguments, no
 * config, no globals. `makeLeadAgent` is the app factory: it reads the config and builds the
 * production agent with it.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { type AgentMiddleware, createAgent, type ReactAgent } from "langchain";
import type { AgentConfig, AppConfig, FeaturesConfig } from "../../config/schema.js";
import { AntlerError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { type ApprovalRules, approvalMiddleware } from "../approvals.js";
import { FORGET, type MemoryBook, memoryFromConfig, REMEMBER, UPDATE_MEMORY } from "../memory/index.js";
import { buildMiddlewareChain, type ExtraMiddleware, type FeatureOptions, type RuntimeFeatures } from "../middleware/chain.js";
import type { MemoryMiddlewareOptions } from "../middleware/memory.js";
import { createChatModel, selectModel } from "../models/index.js";
import { subagentSetup } from "../subagents/from-config.js";
import type { SubagentsSetup } from "../subagents/types.js";
import { ASK_CLARIFICATION, askClarificationTool, dedupeTools, loadConfigTools } from "../tools/index.js";
import type { UsageSink, UsageTarget } from "../usage.js";
import { configuredFeatures } from "./configured-features.js";

export interface AntlerAgentParams {
  model: BaseChatModel;
  /** Tools besides the built-in `ask_clarification` (added unless `middleware` takes over). */
  tools?: StructuredToolInterface[];
  systemPrompt?: string;
  /** Feature switches; cannot be combined with `middleware`. */
  features?: RuntimeFeatures;
  /** The whole chain, as is: a full takeover, no features, no extras, no built-in tool. */
  middleware?: AgentMiddleware[];
  /** Middlewares added to the feature chain, placed with `{ after }` / `{ before }`. */
  extraMiddleware?: ExtraMiddleware[];
  /**
   * Tools (names or globs) whose calls wait for a person's decision, as in `agent.approvals`;
   * resolved against `tools` here. Ignored when `features.approvals` is given; not with `middleware`.
   */
  approvals?: ApprovalRules;
  /** What guardrails, skills and token budgets are built with (each on when its settings are given); not with `middleware`. */
  featureOptions?: FeatureOptions;
  checkpointer?: BaseCheckpointSaver;
  /**
   * What the built-in memory (`features.memory: true`) is made of: a `MemoryBook` over a store,
   * and the model that reads finished turns for facts (none: facts come from the tools only).
   */
  memory?: MemoryMiddlewareOptions;
  /** The LangGraph store tools and middlewares reach as `runtime.store`; the memory book's store when absent. */
  store?: BaseStore;
  /** Agent name in traces. */
  name?: string;
  /**
   * Where the built-in title and summarization report their model calls' usage, and the model
   * name they report (the harness's `modelName`; the harness reports the reply turns itself).
   */
  usage?: UsageTarget;
  /**
   * What the `task` tool runs when `features.subagents` is `true`; a subagent without `tools`
   * gets `tools` (never `ask_clarification`).
   */
  subagents?: SubagentsSetup;
}

/** The compiled agent graph that `createAntlerAgent` returns. */
export type AntlerAgent = ReactAgent;

export function createAntlerAgent(params: AntlerAgentParams): AntlerAgent {
  if (params.middleware && (params.features || params.extraMiddleware || params.approvals || params.featureOptions)) {
    throw new AntlerError(
      "agent_invalid",
      "createAntlerAgent: `middleware` replaces the whole chain and cannot be combined with `features`, `extraMiddleware`, `approvals` or `featureOptions`",
    );
  }
  let tools = [...(params.tools ?? [])];
  let middleware: AgentMiddleware[];
  if (params.middleware) {
    middleware = params.middleware;
  } else {
    const approvals =
      params.approvals &&
      approvalMiddleware(params.approvals, [
        ...tools.map((t) => t.name),
        // The built-in memory brings its tools with its middleware: approvals may name them too.
        ...(params.features?.memory === true ? [REMEMBER, UPDATE_MEMORY, FORGET] : []),
      ]);
    const features = approvals ? { approvals, ...params.features } : params.features;
    const subagents = params.subagents && {
      ...params.subagents,
      agents: params.subagents.agents.map((a) => ({ ...a, tools: a.tools ?? tools.filter((t) => t.name !== ASK_CLARIFICATION) })),
    };
    const options: FeatureOptions = {
      ...params.featureOptions,
      ...(subagents ? { subagents } : {}),
      ...(params.memory ? { memory: params.memory } : {}),
    };
    middleware = buildMiddlewareChain(features, params.extraMiddleware, params.model, params.usage, options);
    assertNoClash(tools, middleware);
    if (!tools.some((t) => t.name === ASK_CLARIFICATION)) tools = [...tools, askClarificationTool];
  }
  return createAgent({
    model: params.model,
    tools: dedupeTools(tools),
    systemPrompt: params.systemPrompt,
    middleware,
    checkpointer: params.checkpointer,
    store: params.store ?? params.memory?.book.store,
    name: params.name,
  }) as unknown as AntlerAgent;
}

/** A tool of the agent named like one a feature brings (`write_todos`, `task`) would shadow it or be shadowed. */
function assertNoClash(tools: StructuredToolInterface[], chain: AgentMiddleware[]): void {
  const brought = new Set(chain.flatMap((m) => (m.tools ?? []).map((t) => (t as { name: string }).name)));
  const clash = tools.find((t) => brought.has(t.name));
  if (clash) {
    throw new AntlerError(
      "agent_invalid",
      `the agent has a tool named ${clash.name}, which a feature brings itself: rename that tool`,
    );
  }
}

/** The config's feature switches as RuntimeFeatures. */
export function featuresFromConfig(features: FeaturesConfig): RuntimeFeatures {
  return {
    danglingToolCalls: features.dangling_tool_calls,
    toolErrors: features.tool_errors,
    loopDetection: features.loop_detection,
    messageIdGuard: features.message_id_guard,
    dynamicContext: features.dynamic_context,
    title: features.title,
    summarization: features.summarization,
    guardrails: features.guardrails,
    planMode: features.plan_mode,
    subagents: features.subagents,
    memory: features.memory,
  };
}

export interface LeadAgentOptions {
  /** Folder of the config file: relative `use:` paths resolve against it. */
  baseDir?: string;
  logger?: Logger;
  /** Extra tools (e.g. from MCP servers), after the configured ones. */
  tools?: StructuredToolInterface[];
  /** The `tools:` of the config, when the caller loaded them already (they are not loaded again). */
  configTools?: StructuredToolInterface[];
  checkpointer?: BaseCheckpointSaver;
  extraMiddleware?: ExtraMiddleware[];
  /** The agent to build; `config.agent` (the default agent) when absent. */
  agent?: AgentConfig;
  /** Receives the usage of the title, summary and memory calls, under the model entry's name. */
  onUsage?: UsageSink;
  /** The tenant the agent serves: its own skills join the shared ones (the default tenant when absent). */
  tenant?: string;
  /** Where the agent's settings sit (`agent`, `agents.<name>`), for errors. */
  section?: string;
  /** The tenant's store; asked for only when the agent has `features.memory` on. */
  store?: () => BaseStore | Promise<BaseStore>;
}

export interface LeadAgent {
  agent: AntlerAgent;
  /** Name of the model entry the agent uses. */
  modelName: string;
  /** Names of the tools the model can call. */
  toolNames: string[];
  /** The tools besides `ask_clarification` (their schemas check edited arguments). */
  tools: StructuredToolInterface[];
  /** The person's facts, when the agent has memory on (for `Harness.memory`). */
  memory?: MemoryBook;
}

/** Builds the production agent from config: model, tools and middleware chain. */
export async function makeLeadAgent(config: AppConfig, options: LeadAgentOptions = {}): Promise<LeadAgent> {
  const agentConfig = options.agent ?? config.agent;
  const entry = selectModel(config.models, agentConfig.model, options.logger);
  const model = await createChatModel(config, entry.name, {
    thinking: agentConfig.thinking,
    baseDir: options.baseDir,
    logger: options.logger,
  });
  const configured =
    options.configTools ?? (await loadConfigTools(config.tools, { baseDir: options.baseDir, logger: options.logger }));
  const tools = dedupeTools([...configured, ...(options.tools ?? [])], options.logger);
  const { baseDir = process.cwd(), logger, tenant, section } = options;
  const featureOptions = await configuredFeatures(config, agentConfig, { baseDir, logger, tenant, section });
  const subagents = agentConfig.features.subagents
    ? await subagentSetup(config, agentConfig, {
        tools,
        leadModel: entry.name,
        recursionLimit: agentConfig.recursion_limit,
        baseDir,
        logger,
      })
    : undefined;
  const memory = await leadMemory(config, agentConfig, entry.name, options);
  const agent = createAntlerAgent({
    model,
    tools,
    systemPrompt: agentConfig.system_prompt,
    features: featuresFromConfig(agentConfig.features),
    extraMiddleware: options.extraMiddleware,
    approvals: agentConfig.approvals,
    featureOptions,
    checkpointer: options.checkpointer,
    name: agentConfig.name,
    usage: options.onUsage && { sink: options.onUsage, model: entry.name },
    subagents,
    ...(memory ? { memory } : {}),
  });
  const toolNames = [...tools.map((t) => t.name), ...(memory ? [REMEMBER, UPDATE_MEMORY, FORGET] : []), ASK_CLARIFICATION];
  return { agent, modelName: entry.name, toolNames, tools, ...(memory ? { memory: memory.book } : {}) };
}

/** The agent's memory when `features.memory` is on: the book over the tenant's store, and the extraction model. */
async function leadMemory(config: AppConfig, agentConfig: AgentConfig, modelName: string, options: LeadAgentOptions) {
  if (!agentConfig.features.memory) return undefined;
  if (!options.store) throw new AntlerError("agent_invalid", "features.memory needs a store: build the agent with one");
  return memoryFromConfig(config, agentConfig, {
    store: await options.store(),
    agentModel: modelName,
    baseDir: options.baseDir,
    logger: options.logger,
    onUsage: options.onUsage,
  });
}
