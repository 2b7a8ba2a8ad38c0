/**
 * Antler as a library. Grouped by who needs it:
 * - running a gateway from code;
 * - building the agent without the gateway;
 * - writing a channel adapter (the contract) or a plug-in loaded by path.
 */

export { accessConfigShape, accessRulesFrom } from "./channels/kit/access.js";
export { ChannelLifecycle, LifecycleChannel, type OpenResult } from "./channels/kit/lifecycle.js";
// A channel's Markdown: the one renderer, driven by the adapter's emitter.
export {
  type LinkInfo,
  type ListItemInfo,
  type MarkdownEmitter,
  plainEmitter,
  renderMarkdown,
  type TableInfo,
} from "./channels/markdown/index.js";
// Writing a channel.
export type {
  AccessRules,
  ButtonSpec,
  Channel,
  ChannelCapabilities,
  ChannelClass,
  ChannelContext,
  ChannelStatus,
  ConversationRef,
  InboundAction,
  InboundMessage,
  InboundSink,
  MarkdownDialect,
  MessageHandle,
  NativeStream,
  OutboundContent,
} from "./channels/types.js";
export { type LoadedConfig, loadConfig } from "./config/loader.js";
export type { AppConfig } from "./config/schema.js";
export {
  AntlerError,
  ChannelError,
  ConfigError,
  NotModifiedError,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
} from "./errors.js";
// Running a gateway.
export { createGateway, Gateway, type GatewayOptions } from "./gateway.js";
// The agent.
export {
  AgentDirectory,
  createAgentBackend,
  createAntlerAgent,
  type GraphFactoryArgs,
  type ModelUsage,
  makeLeadAgent,
  RemoteHarness,
  type RuntimeFeatures,
  type UsageSink,
} from "./harness/index.js";
export type { AgentStatus, Clarification, Harness, RunEvent, RunOptions, ThreadInfo } from "./harness/types.js";
export type { HarnessClass, HarnessContext } from "./harness/use-backend.js";
// Plug-ins by path.
export { resolveClass, resolveVariable } from "./reflection/index.js";
// Routing chats to agents.
export { type Route, type RouteInput, Router } from "./routing/index.js";
// Storage: the SQLite checkpointer that keeps one tenant's checkpoints apart.
export { TenantCheckpointSaver } from "./storage/index.js";
