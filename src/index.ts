/**
 * Antler as a library. Grouped by who needs it:
 * - running a gateway from code;
 * - building the agent without the gateway;
 * - writing a channel adapter (the contract) or a plug-in loaded by path.
 */

// Running a gateway.
export { createGateway, Gateway, type GatewayOptions } from "./gateway.js";
export { type LoadedConfig, loadConfig } from "./config/loader.js";
export type { AppConfig } from "./config/schema.js";

// The agent.
export { createAntlerAgent, makeLeadAgent, type RuntimeFeatures } from "./harness/index.js";
export type { Clarification, Harness, RunEvent, RunOptions, ThreadInfo } from "./harness/types.js";

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
export { accessConfigShape, accessRulesFrom } from "./channels/access.js";
export {
  AntlerError,
  ChannelError,
  ConfigError,
  NotModifiedError,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
} from "./errors.js";

// Plug-ins by path.
export { resolveClass, resolveVariable } from "./reflection/index.js";
