/**
 * `channels.telegram` keys. Credentials stay optional here so a config without them still
 * loads; `start()` reports what is missing and how to fix it.
 */
import { z } from "zod";
import type { ConfigRenames } from "../../config/renames.js";
import { num } from "../../config/schema.js";
import { accessConfigShape } from "../kit/access.js";

/** Telegram's own rule for `secret_token`: 1-256 of A-Z, a-z, 0-9, `_` and `-`. */
const SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

export const TelegramChannelConfig = z.strictObject({
  /** Token from @BotFather. */
  bot_token: z.string().optional(),
  /** `polling` (getUpdates long poll) or `webhook` (route on Antler's HTTP server). */
  mode: z.enum(["polling", "webhook"]).default("polling"),
  /** Public HTTPS URL Telegram posts updates to; its path is where the route is mounted. */
  webhook_url: z.string().optional(),
  /** Sent by Telegram in `X-Telegram-Bot-Api-Secret-Token`; required in webhook mode. */
  webhook_secret: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === "" || SECRET_TOKEN.test(v), {
      message: "must be 1-256 characters of A-Z, a-z, 0-9, _ and - (Telegram's secret_token rule)",
    }),
  /** Bot API root; tests point it at a fake. Without a path, e.g. `https://api.telegram.org`. */
  api_base: z.string().default("https://api.telegram.org"),
  /** Minimum ms between edits of one message; unset = 1000 in private chats, 3000 in groups. */
  edit_interval_ms: num().pipe(z.number().int().min(0)).optional(),
  ...accessConfigShape,
});

export type TelegramChannelConfig = z.output<typeof TelegramChannelConfig>;

/** Names of older versions, still accepted with a warning. */
export const TELEGRAM_RENAMES: ConfigRenames = { keys: { api_root: "api_base" } };

/** Default edit intervals when `edit_interval_ms` is not set. */
export const DEFAULT_EDIT_INTERVAL_MS = { direct: 1000, group: 3000 } as const;
