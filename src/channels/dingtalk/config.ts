/**
 * Config of the DingTalk channel (`channels.dingtalk`). Credentials stay optional here so a
 * config without them still loads; `start()` names the missing key and the fix.
 */
import { z } from "zod";
import type { ConfigRenames } from "../../config/renames.js";
import { num } from "../../config/schema.js";
import { accessConfigShape } from "../kit/access.js";

export const DEFAULT_API_BASE = "https://api.dingtalk.com";
export const DEFAULT_OAPI_BASE = "https://oapi.dingtalk.com";
export const DEFAULT_GATEWAY_URL = "https://api.dingtalk.com/v1.0/gateway/connections/open";

export const DingTalkChannelConfig = z.strictObject({
  /** `stream` (WebSocket via dingtalk-stream) or `webhook` (robot callbacks POSTed to Antler). */
  mode: z.enum(["stream", "webhook"]).default("stream"),
  /** AppKey / Client ID of the DingTalk app. */
  client_id: z.string().optional(),
  /** AppSecret / Client Secret; also the HMAC key of HTTP callbacks. */
  client_secret: z.string().optional(),
  /** Robot code for the proactive send APIs; defaults to the one in the message, then client_id. */
  robot_code: z.string().optional(),
  /**
   * The organisation's corp id (`ding…`): the `<corp>` of conversation keys, which inbound
   * messages carry but a message sent first cannot learn. Needed by `resolveTarget` unless the
   * target names its `workspace`.
   */
  corp_id: z.string().trim().min(1).optional(),
  /** AI card template id; when set, replies stream into an AI card. */
  card_template_id: z.string().optional(),
  /** Template variable (markdown) that holds the reply text. */
  card_content_key: z.string().min(1).default("content"),
  /** Template variable holding the button list; set only when the template renders buttons. */
  card_buttons_key: z.string().optional(),
  /**
   * Template variable (markdown) for the progress view, shown beside the reply; set only when the
   * template has one. Unset: the view is written into the reply's text as lines.
   */
  card_progress_key: z.string().min(1).optional(),
  /** OpenAPI base URL (tests point it at a fake). */
  api_base: z.string().url().default(DEFAULT_API_BASE),
  /**
   * Base URL of DingTalk's older API host, which still serves the media upload behind
   * `sendFile` (tests point it at a fake). Same access token as `api_base`.
   */
  oapi_base: z.string().url().default(DEFAULT_OAPI_BASE),
  /** Stream-mode gateway URL (tests point it at a fake). */
  gateway_url: z.string().url().default(DEFAULT_GATEWAY_URL),
  /**
   * Webhook mode: another path for the robot callback, mounted beside `/webhooks/<name>` (and the
   * old default `/dingtalk/<name>/callback`, which stays mounted too).
   */
  callback_path: z.string().startsWith("/").optional(),
  /** Groups: `user` gives each sender their own thread, `chat` shares one thread per group. */
  session_scope: z.enum(["user", "chat"]).default("user"),
  /** Minimum time between two AI card updates, ms. */
  edit_interval_ms: num().pipe(z.number().int().min(0)).default(300),
  ...accessConfigShape,
});

export type DingTalkChannelConfig = z.output<typeof DingTalkChannelConfig>;

/** Names of older versions, still accepted with a warning. */
export const DINGTALK_RENAMES: ConfigRenames = {
  keys: { stream_interval_ms: "edit_interval_ms" },
  values: { mode: { http: "webhook" } },
};
