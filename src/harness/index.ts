/**
 * The harness: the agent runtime every chat message drives. Knows nothing of chats.
 */

export {
  type ApprovalRuleLike,
  type ApprovalRules,
  approvalMiddleware,
  approvalRuleFor,
  resolveInterruptOn,
  TOOL_APPROVAL,
} from "./approvals.js";
export {
  type AgentParts,
  type BackendFactory,
  buildAgent,
  type CreateHarnessOptions,
  createAgentBackend,
  createHarness,
} from "./backends.js";
export { AgentDirectory, type AgentDirectoryOptions, type AgentEntry, type TenantMcpReport } from "./directory.js";
export {
  type AntlerAgent,
  type AntlerAgentParams,
  createAntlerAgent,
  featuresFromConfig,
  type LeadAgent,
  type LeadAgentOptions,
  makeLeadAgent,
} from "./embedded/agent.js";
export { AgentHarness, type AgentHarnessOptions } from "./embedded/harness.js";
export { type GraphFactoryArgs, loadUserGraph } from "./graph/index.js";
export type {
  GuardedCall,
  GuardrailPolicy,
  GuardrailPolicyFn,
  GuardrailRules,
  GuardrailVerdict,
  ToolRule,
} from "./guardrails/index.js";
export { McpServer, type McpServerReport, type McpServerState, McpServers } from "./mcp/index.js";
export { MemoryBook, type MemoryBookOptions, type MemoryFact, namespaceOf, type PersonMemory } from "./memory/index.js";
export {
  buildMiddlewareChain,
  type ExtraMiddleware,
  type FeatureOptions,
  type FeatureSetting,
  type PlacedMiddleware,
  type RuntimeFeatures,
} from "./middleware/chain.js";
export { type GuardrailsOptions, guardrailsMiddleware } from "./middleware/guardrails.js";
export { skillsMiddleware } from "./middleware/skills.js";
export { type RunBudget, tokenBudgetMiddleware } from "./middleware/token-budget.js";
export { type CreateChatModelOptions, createChatModel, selectModel } from "./models/index.js";
export { RemoteHarness, type RemoteHarnessOptions } from "./remote/index.js";
export type { RunErrorCode } from "./run-errors.js";
export { agentSkills, type Skill } from "./skills/index.js";
export { type SubagentSpec, type SubagentsSetup, subagentsMiddleware } from "./subagents/index.js";
export { ASK_CLARIFICATION, askClarificationTool, loadConfigTools } from "./tools/index.js";
export type {
  AgentStatus,
  ApprovalAnswer,
  ApprovalRequest,
  Clarification,
  Decision,
  DecisionType,
  Harness,
  RunEvent,
  RunLimit,
  RunOptions,
  RunUser,
  ThreadInfo,
  Usage,
} from "./types.js";
export type { ModelUsage, UsageKind, UsageSink } from "./usage.js";
export type { HarnessClass, HarnessContext } from "./use-backend.js";
