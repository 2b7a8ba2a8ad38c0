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
export { McpServer, type McpServerReport, type McpServerState, McpServers } from "./mcp/index.js";
export { MemoryBook, type MemoryBookOptions, type MemoryFact, namespaceOf, type PersonMemory } from "./memory/index.js";
export {
  buildMiddlewareChain,
  type ExtraMiddleware,
  type FeatureSetting,
  type PlacedMiddleware,
  type RuntimeFeatures,
} from "./middleware/chain.js";
export { type CreateChatModelOptions, createChatModel, selectModel } from "./models/index.js";
export { RemoteHarness, type RemoteHarnessOptions } from "./remote/index.js";
export type { RunErrorCode } from "./run-errors.js";
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
  RunOptions,
  RunUser,
  ThreadInfo,
  Usage,
} from "./types.js";
export type { ModelUsage, UsageKind, UsageSink } from "./usage.js";
export type { HarnessClass, HarnessContext } from "./use-backend.js";
