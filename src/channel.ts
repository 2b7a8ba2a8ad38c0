/**
 * `antler/channel`: everything a channel adapter is written with, the built-in ones and one of
 * your own loaded by `use:` alike. Grouped by what an adapter author needs it for:
 * - the contract: the class the registry loads, what it receives and what it sends;
 * - the kit: the lifecycle, webhook routes, bounded bodies and downloads, held clicks, access;
 * - the config keys: zod (the same copy Antler checks with) for a channel's `configSchema`;
 * - Markdown: the one renderer and the hooks of an emitter;
 * - errors: every error an adapter throws, so the core treats it the same on every platform.
 * Running a gateway and the agent are `antler`; the contract suite is `antler/testing`.
 */
// biome-ignore-all assist/source/organizeImports: the exports are grouped by what an adapter needs them for

// The contract: the channel class, its context, and what goes in and out.
export type {
  AccessRules,
  AttachmentKind,
  ButtonSpec,
  Channel,
  ChannelCapabilities,
  ChannelClass,
  ChannelContext,
  ChannelState,
  ChannelStatus,
  ChatType,
  ConversationHistory,
  ConversationRef,
  DownloadOptions,
  HttpMount,
  InboundAction,
  InboundAttachment,
  InboundMessage,
  InboundSink,
  JsonValue,
  MarkdownDialect,
  MessageHandle,
  NativeStream,
  NativeStreamLimits,
  OutboundContent,
  OutboundFile,
  SendOptions,
  SendTarget,
  SinkOptions,
  TurnOrigin,
  WaitingMessage,
} from "./channels/types.js";
export { REQUIRED_CHANNEL_METHODS } from "./channels/types.js";
export type { ConfigRenames } from "./config/renames.js";
export type { HistoryEntry } from "./harness/types.js";
export type { Logger } from "./log/logger.js";

// The kit: one start/stop/status (lifecycle), webhook routes on Antler's port with their bounded
// bodies and a shared secret compared in constant time, files read without holding more than
// the limit (downloads), clicks held open until the core answers them, and the access keys every
// adapter shares with the rules built from them; every platform call through one helper that
// maps its error and notes it on the channel's status; bounded recent-sets for what an adapter
// remembers only as a convenience.
export { ChannelLifecycle, LifecycleChannel, type OpenResult } from "./channels/kit/lifecycle.js";
export { mountWebhook, webhookPath } from "./channels/kit/webhook-route.js";
export { HttpError, isJsonObject, readBody, readJson } from "./server/body.js";
export { type RouteHandler, type RouteParams, sendJson } from "./server/http.js";
export { tokenMatches } from "./server/auth.js";
export { fetchBounded, mimeFromName, readBounded, readResponse, refuseStatedSize } from "./channels/kit/downloads.js";
export { countsAgainstChannel, PlatformCalls, type PlatformErrorMapper } from "./channels/kit/platform-call.js";
export { RecentMap, RecentSet } from "./channels/kit/recent.js";
export { ClickHolds, type ClickVerdict } from "./channels/kit/click-holds.js";
export { AccessConfig, accessConfigShape, accessRulesFrom } from "./channels/kit/access.js";

// Config keys: the zod Antler checks a `configSchema` with (the same copy, so its schemas are
// understood), and keys that also accept a `${VAR}` string.
export { z } from "zod";
export { bool, idList, num } from "./config/sections.js";

// Markdown: the renderer, an emitter's hooks, and the pieces the built-in emitters share.
export {
  defaultMarker,
  type FullEmitter,
  fullEmitter,
  type LinkInfo,
  type ListItemInfo,
  labelAndTarget,
  literalMarkdown,
  longestRun,
  type MarkdownEmitter,
  plainEmitter,
  prefixLines,
  renderMarkdown,
  type TableInfo,
  tableLines,
} from "./channels/markdown/index.js";

// Errors an adapter throws: a closed list of codes, and one class per failure the core acts on.
export {
  AntlerError,
  type AntlerErrorOptions,
  ChannelError,
  type ChannelErrorCode,
  errorMessage,
  FileTooLargeError,
  NotModifiedError,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
  TargetUnreachableError,
} from "./errors.js";
