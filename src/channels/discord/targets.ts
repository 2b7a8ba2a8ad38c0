/**
 * Sending first on Discord: a person (`{user}`, reached in the DM that `POST /users/@me/channels`
 * opens) or a channel id (`{chat}`; a thread is a channel of its own, named as the chat or as
 * `{chat: parent, thread}`) becomes the ConversationRef that messages from there get (inbound.ts's
 * keys), and a send's idempotency key becomes Discord's message nonce.
 */
import { createHash } from "node:crypto";
import { type APIChannel, ChannelType, type REST, Routes } from "discord.js";
import { TargetUnreachableError } from "../../errors.js";
import type { PlatformCalls } from "../kit/platform-call.js";
import type { ConversationRef, SendTarget } from "../types.js";
import { DiscordCode, discordErrorCode } from "./map-error.js";

/** Discord's longest message nonce. */
const NONCE_MAX = 25;

/** Lookup refusals that mean the bot cannot reach the target: no such channel or user, or a channel it cannot see. */
const UNREACHABLE = new Set<number>([
  DiscordCode.UnknownChannel,
  DiscordCode.UnknownUser,
  DiscordCode.MissingAccess,
  DiscordCode.CannotMessageUser,
  // Invalid Form Body on opening a DM: the recipient is not a user Discord knows.
  DiscordCode.InvalidFormBody,
]);

const THREADS = new Set<number>([ChannelType.PublicThread, ChannelType.PrivateThread, ChannelType.AnnouncementThread]);
const FORUMS = new Set<number>([ChannelType.GuildForum, ChannelType.GuildMedia]);

/**
 * The nonce of a message part: the same idempotency key always gives the same nonce, so with
 * `enforce_nonce` Discord returns the first message for a retried create instead of posting again.
 */
export function discordNonce(idempotencyKey: string): string {
  return createHash("sha256").update(idempotencyKey).digest("base64url").slice(0, NONCE_MAX);
}

/** The body fields that make a create safe to repeat, when the core gave a key. */
export function nonceFields(idempotencyKey: string | undefined): Record<string, unknown> {
  return idempotencyKey ? { nonce: discordNonce(idempotencyKey), enforce_nonce: true } : {};
}

export class DiscordTargets {
  constructor(
    private readonly name: string,
    private readonly rest: () => REST,
    private readonly calls: PlatformCalls,
  ) {}

  async resolve(target: SendTarget): Promise<ConversationRef> {
    const name = this.name;
    if (target.user !== undefined) {
      const user = target.user;
      const dm = await this.call<APIChannel>("opening a DM", () =>
        this.rest().post(Routes.userChannels(), { body: { recipient_id: user } }),
      );
      return { channel: name, key: `${name}:@me:${dm.id}`, chatId: dm.id, chatType: "direct" };
    }
    const channel = await this.channel(target.chat);
    if (!channel.guild_id) {
      if (target.thread !== undefined) throw this.unreachable(`${target.chat} is a DM: it has no threads`);
      return { channel: name, key: `${name}:@me:${channel.id}`, chatId: channel.id, chatType: "direct" };
    }
    const guild = channel.guild_id;
    if (target.workspace !== undefined && target.workspace !== guild) {
      throw this.unreachable(`channel ${channel.id} is not in server ${target.workspace}`);
    }
    const base = { channel: name, chatType: "group" as const, workspace: guild };
    if (THREADS.has(channel.type) && channel.parent_id) {
      if (target.thread !== undefined) throw this.unreachable(`${target.chat} is a thread itself: name it as the chat`);
      return {
        ...base,
        key: `${name}:${guild}:${channel.parent_id}:${channel.id}`,
        chatId: channel.parent_id,
        threadId: channel.id,
      };
    }
    if (target.thread !== undefined) {
      const thread = await this.channel(target.thread);
      if (!THREADS.has(thread.type) || thread.parent_id !== channel.id) {
        throw this.unreachable(`${target.thread} is not a thread of channel ${channel.id}`);
      }
      return { ...base, key: `${name}:${guild}:${channel.id}:${thread.id}`, chatId: channel.id, threadId: thread.id };
    }
    if (FORUMS.has(channel.type)) throw this.unreachable(`${channel.id} is a forum: name one of its posts as the thread`);
    return { ...base, key: `${name}:${guild}:${channel.id}`, chatId: channel.id };
  }

  private channel(id: string): Promise<APIChannel & { guild_id?: string; parent_id?: string | null }> {
    return this.call(`looking up channel ${id}`, () => this.rest().get(Routes.channel(id)));
  }

  /** One lookup; a refused target is the target's state, so only other failures go on the channel's status. */
  private async call<T>(what: string, run: () => Promise<unknown>): Promise<T> {
    try {
      return (await run()) as T;
    } catch (err) {
      const code = discordErrorCode(err);
      if (code !== undefined && UNREACHABLE.has(code)) {
        throw new TargetUnreachableError(this.name, `${what}: Discord code ${code}: ${(err as Error).message}`, { cause: err });
      }
      throw this.calls.failure(err, what);
    }
  }

  private unreachable(reason: string): TargetUnreachableError {
    return new TargetUnreachableError(this.name, reason);
  }
}
