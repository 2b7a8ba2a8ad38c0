/**
 * `channels.feishu` keys. Credentials stay optional here so that a config without them still
 * loads; `start()` says which key is missing and how to fix it.
 */
import { z } from "zod";
import type { ConfigRenames } from "../../config/renames.js";
import { num } from "../../config/schema.js";
import { accessConfigShape } from "../kit/access.js";

/** `feishu`, `lark`, or the base URL of an Open Platform host (tests point it at a fake). */
const DomainValue = z
  .string()
  .trim()
  .refine((v) => v === "feishu" || v === "lark" || /^https?:\/\/[^\s/]+/.test(v), {
    message: 'must be "feishu", "lark" or a URL such as https://open.feishu.cn',
  });

export const FeishuChannelConfig = z.strictObject({
  /** `websocket` (the SDK's long connection, no public URL needed) or `webhook` (route on Antler's server). */
  mode: z.enum(["websocket", "webhook"]).default("websocket"),
  /** App ID from the developer console, `cli_…`. */
  app_id: z.string().optional(),
  /** App secret from the developer console. */
  app_secret: z.string().optional(),
  /** Which Open Platform to talk to. */
  api_base: DomainValue.default("feishu"),
  /** Event encryption key; when set, webhook bodies are decrypted and `X-Lark-Signature` is checked. */
  encrypt_key: z.string().optional(),
  /** Verification token; when set, every webhook event must carry it. */
  verification_token: z.string().optional(),
  /**
   * Minimum ms between two updates of one streaming card. CardKit allows 10 operations/s per
   * card and finishing takes two, so anything under 150 ms would break that limit.
   */
  edit_interval_ms: num().pipe(z.number().int().min(150)).default(200),
  ...accessConfigShape,
});

export type FeishuChannelConfig = z.output<typeof FeishuChannelConfig>;

/** Names of older versions, still accepted with a warning. */
export const FEISHU_RENAMES: ConfigRenames = { keys: { domain: "api_base", stream_interval_ms: "edit_interval_ms" } };
