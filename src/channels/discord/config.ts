/**
 * `channels.discord` keys. The token stays optional here so that a config without it still
 * loads; `start()` names the missing key and how to fix it.
 */
import { z } from "zod";
import type { ConfigRenames } from "../../config/renames.js";
import { bool, idList, num } from "../../config/schema.js";
import { accessConfigShape } from "../kit/access.js";

export const DISCORD_DEFAULT_API_BASE = "https://discord.com/api";

/** Old names that still work, with a warning (see src/config/renames.ts). */
export const DISCORD_RENAMES: ConfigRenames = { values: { session_scope: { channel: "chat" } } };

export const DiscordChannelConfig = z.strictObject({
  /** Bot token from the Developer Portal (Bot → Token). */
  bot_token: z.string().optional(),
  /** Application id; read from the Gateway's READY when unset. Needed only to register commands. */
  application_id: z.string().optional(),
  /** Server (guild) ids the bot answers in; empty = every server it was added to. DMs are not servers. */
  allowed_guilds: idList().default([]),
  /** Server channel ids the bot answers in (a thread counts as its parent channel); empty = all. */
  allowed_channels: idList().default([]),
  allowed_users: accessConfigShape.allowed_users,
  /** Server channels: answer only when @mentioned or replied to (threads the bot is in need neither). */
  require_mention: accessConfigShape.require_mention,
  approvers: accessConfigShape.approvers,
  /** Server channels: start a thread from the message that addressed the bot and answer there. */
  thread: bool().default(true),
  /**
   * With `thread: false`: one conversation per channel (`chat`, the contract's word for it), or
   * per `user` in each channel. `channel` is the old spelling of `chat`.
   */
  session_scope: z.enum(["chat", "user"]).default("chat"),
  /** Minimum time between two edits of one message. */
  edit_interval_ms: num().pipe(z.number().int().min(0)).default(1000),
  /** REST API root without the version, e.g. `https://discord.com/api`; tests point it at a fake. */
  api_base: z
    .string()
    .url()
    .default(DISCORD_DEFAULT_API_BASE)
    .transform((u) => u.replace(/\/+$/, "")),
  /** Gateway WebSocket URL instead of the one `GET /gateway/bot` names; tests point it at a fake. */
  gateway_url: z.string().url().optional(),
  /** Slash commands /new, /status, /stop, /help: `off`, `guild` (each allowed server, at once) or `global`. */
  register_commands: z.enum(["off", "guild", "global"]).default("off"),
});

export type DiscordChannelConfig = z.output<typeof DiscordChannelConfig>;
