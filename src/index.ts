/**
 * `antler`: Antler as a library. Grouped by who needs it:
 * - running a gateway from code, with its config;
 * - building the agent without the gateway;
 * - plug-ins loaded by path, and routing chats to agents;
 * - the errors Antler throws.
 * Writing a channel adapter is `antler/channel` (the whole contract, the kit, the Markdown
 * emitter API); testing one is `antler/testing`.
 */
// biome-ignore-all assist/source/organizeImports: the exports are grouped by who needs them

// Running a gateway, with its config.
export { createGateway, Gateway, type GatewayOptions } from "./gateway.js";
export { type LoadedConfig, loadConfig } from "./config/loader.js";
export type { AppConfig } from "./config/schema.js";

// The agent, without the gateway.
export {
  AgentDirectory,
  createAgentBackend,
  createAntlerAgent,
  type GraphFactoryArgs,
  type GuardedCall,
  type GuardrailPolicy,
  type GuardrailVerdict,
  type ModelUsage,
  makeLeadAgent,
  MemoryBook,
  RemoteHarness,
  type RuntimeFeatures,
  type UsageSink,
} from "./harness/index.js";
export type { AgentStatus, Clarification, Harness, RunEvent, RunLimit, RunOptions, ThreadInfo } from "./harness/types.js";
// A backend of your own, named by `agent.backend: "module:Export"`.
export type { HarnessClass, HarnessContext } from "./harness/use-backend.js";
// Storage: the SQLite checkpointer that keeps one tenant's checkpoints apart, and what a
// binding store implements (checked by `bindingStoreContract` in `antler/testing`).
export { TenantCheckpointSaver } from "./storage/index.js";
export type { Bindings, BindingStore, Inbox, PendingQuestions } from "./bindings/types.js";
export type { Outbox, OutboxEntry, OutboxState } from "./bindings/outbox.js";
export type { Schedule, Schedules } from "./bindings/schedules.js";

// Plug-ins by path, and routing chats to agents.
export { resolveClass, resolveVariable } from "./reflection/index.js";
export { type Route, type RouteInput, Router } from "./routing/index.js";

// Errors.
export {
  AntlerError,
  ChannelError,
  ConfigError,
  NotModifiedError,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
  TargetUnreachableError,
} from "./errors.js";

// Kept for compatibility: adapters written before `antler/channel` existed imported these from
// `antler`. New code imports them (and the rest of the contract) from `antler/channel`.
export {
  type AccessRules,
  accessConfigShape,
  accessRulesFrom,
  type ButtonSpec,
  type Channel,
  type ChannelCapabilities,
  type ChannelClass,
  type ChannelContext,
  ChannelLifecycle,
  type ChannelStatus,
  type ConversationRef,
  type InboundAction,
  type InboundMessage,
  type InboundSink,
  LifecycleChannel,
  type LinkInfo,
  type ListItemInfo,
  type MarkdownDialect,
  type MarkdownEmitter,
  type MessageHandle,
  type NativeStream,
  type OpenResult,
  type OutboundContent,
  plainEmitter,
  renderMarkdown,
  type TableInfo,
} from "./channel.js";
