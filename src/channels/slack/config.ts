/**
 * `channels.slack` keys. Credentials stay optional here so that a config without them still
 * loads; `start()` names the missing key and how to fix it.
 */
import { z } from "zod";
import type { ConfigRenames } from "../../config/renames.js";
import { bool, num } from "../../config/schema.js";
import { accessConfigShape } from "../kit/access.js";

export const SLACK_DEFAULT_API_BASE = "https://slack.com/api/";

/** Names of older versions, still accepted with a warning. */
export const SLACK_RENAMES: ConfigRenames = { keys: { api_url: "api_base" }, values: { mode: { http: "webhook" } } };

export const SlackChannelConfig = z.strictObject({
  /** `socket` (Socket Mode, app token) or `webhook` (Events API on Antler's server, signing secret). */
  mode: z.enum(["socket", "webhook"]).default("socket"),
  /** Bot token, `xoxb-…`: every Web API call. */
  bot_token: z.string().optional(),
  /** App-level token, `xapp-…`: Socket Mode only. */
  app_token: z.string().optional(),
  /** Signing secret: webhook mode only, checks every request. */
  signing_secret: z.string().optional(),
  /** Web API base URL with a trailing slash; tests point it at a fake. */
  api_base: z
    .string()
    .url()
    .default(SLACK_DEFAULT_API_BASE)
    .transform((u) => (u.endsWith("/") ? u : `${u}/`)),
  allowed_users: accessConfigShape.allowed_users,
  /** Slack calls its chats channels, hence `allowed_channels` for the shared `allowed_chats`. */
  allowed_channels: accessConfigShape.allowed_chats,
  require_mention: accessConfigShape.require_mention,
  approvers: accessConfigShape.approvers,
  /** Stream replies in threads with chat.startStream/appendStream/stopStream. */
  native_streaming: bool().default(true),
  /** Minimum time between two chat.update calls on one message. */
  edit_interval_ms: num().pipe(z.number().int().min(0)).default(1000),
});

export type SlackChannelConfig = z.output<typeof SlackChannelConfig>;
