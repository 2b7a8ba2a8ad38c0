/**
 * What the `task` tool is built from: the subagents it can run and the limits of one run. The app
 * builds this from `agent.subagents` (from-config.ts); SDK users hand it to `createAntlerAgent`.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";

/** One subagent: a `createAgent` of its own, run fresh for each task. */
export interface SubagentSpec {
  /** What the model writes as `subagent_type`. */
  name: string;
  /** When to use it; the model reads it in the `task` tool's description. */
  description: string;
  systemPrompt: string;
  /** Its own model; the lead agent's when absent. */
  model?: BaseChatModel;
  /** The name its usage is reported under; the lead agent's model name when absent. */
  modelName?: string;
  /** Its tools; the lead agent's own (without `ask_clarification`) when absent, none when `[]`. */
  tools?: StructuredToolInterface[];
  /** Overrides {@link SubagentsSetup.timeoutMs}. */
  timeoutMs?: number;
}

/** The subagents of one agent and the limits each of its runs keeps. */
export interface SubagentsSetup {
  agents: SubagentSpec[];
  /** Subagents of one run at work at once; more `task` calls wait for a slot. Default 3. */
  maxConcurrent?: number;
  /** How long one subagent may work once it has a slot. Default 15 minutes. */
  timeoutMs?: number;
  /** LangGraph steps one subagent run may take (a model turn and a tools step are one each). Default 50. */
  recursionLimit?: number;
}
