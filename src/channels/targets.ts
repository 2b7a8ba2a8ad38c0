/**
 * Sending first: where a message goes when nobody wrote to the bot just now (`POST /api/send`,
 * `POST /api/runs`, a schedule), and how a send is made safe to repeat.
 */
import type { Json } from "../storage/json.js";

/**
 * A conversation or a person, as an API caller names it, before the adapter turns it into a
 * {@link ConversationRef} with {@link Channel.resolveTarget}.
 * - `chat`: a chat the bot is in (a Slack channel id, a Telegram chat id, a Feishu chat_id, a
 *   DingTalk openConversationId, a Discord channel id, a web chat visitor), with an optional
 *   platform `thread` (Slack thread ts, Telegram topic id, Feishu root message id).
 * - `user`: a person, reached by a direct message where the platform allows it.
 * `workspace` is the platform's workspace (Slack team, Discord server) where it matters.
 */
export type SendTarget =
  | { chat: string; thread?: string; workspace?: string; user?: undefined }
  | { user: string; workspace?: string; chat?: undefined; thread?: undefined };

/** How the core asks for one send. */
export interface SendOptions {
  /**
   * Stable per message part and the same on every retry of it. An adapter whose platform takes an
   * idempotency or client message id (Feishu `uuid`, Discord `nonce`) passes it, so a retry after a
   * crash between the platform's accept and Antler's record is not posted twice.
   */
  idempotencyKey?: string;
}

/**
 * Why an agent turn ran without a user message in front of it: an API call or a schedule's fire.
 * The core skips access, mention and command parsing for it, and reports its end to the outbox.
 */
export interface TurnOrigin {
  kind: "api" | "schedule";
  /** The outbox entry the turn belongs to. */
  outboxId: string;
  /** `fresh`: start a new thread before the turn; default: the conversation's own thread. */
  thread?: "fresh" | "conversation";
  /** The agent to run, instead of the conversation's. */
  agent?: string;
  /** The schedule that fired, for `schedule` turns. */
  scheduleId?: string;
  /** Anything else the origin wants kept; opaque to adapters. */
  extra?: Json;
}
