/**
 * Sending first on Telegram: a chat id (with an optional forum topic) or a user id becomes the
 * ConversationRef that messages from that chat or topic get, once getChat says the bot may reach
 * it. A private chat's id is its user's id, and Telegram knows that chat only after the user
 * started the bot: before that getChat answers "chat not found".
 */
import type { Telegram } from "telegraf";
import { ChannelError, TargetUnreachableError } from "../../errors.js";
import type { PlatformCalls } from "../kit/platform-call.js";
import type { ChatType, ConversationRef, SendTarget } from "../types.js";
import { type BotIdentity, telegramKey } from "./inbound.js";
import { mapTelegramError } from "./map-error.js";

/** What getChat tells about a chat, as far as a target needs it. */
interface ChatInfo {
  id: number;
  type: string;
  is_forum?: boolean;
}

export class TelegramTargets {
  constructor(
    private readonly name: string,
    private readonly telegram: () => Telegram,
    private readonly identity: () => BotIdentity | undefined,
    private readonly calls: PlatformCalls,
  ) {}

  /** The ref to post to `target`, keyed as inbound messages from there are; throws `TargetUnreachableError` when the bot may not. */
  async resolve(target: SendTarget): Promise<ConversationRef> {
    const bot = this.identity();
    const telegram = this.telegram();
    if (!bot) throw new ChannelError(this.name, "not_started", "the Telegram channel is not running");
    if (target.workspace !== undefined && target.workspace !== String(bot.id)) {
      throw new TargetUnreachableError(this.name, `workspace ${target.workspace} is not this bot (bot id ${bot.id})`);
    }
    const wanted = target.user ?? target.chat;
    const info = await this.getChat(telegram, wanted);
    const chatType = chatTypeOf(info.type);
    if (!chatType) {
      throw new TargetUnreachableError(
        this.name,
        `chat ${info.id} is a ${info.type}: Antler talks in private chats, groups and forum topics`,
      );
    }
    if (target.user !== undefined && chatType !== "direct") {
      throw new TargetUnreachableError(this.name, `${wanted} is a ${info.type}, not a user: name it as a chat`);
    }
    const chatId = String(info.id);
    const thread = target.thread;
    if (thread !== undefined && !info.is_forum) {
      // Only forum topics are conversations of their own (see inbound.ts); a reply thread is not.
      throw new TargetUnreachableError(
        this.name,
        `chat ${chatId} has no topics (it is not a forum): cannot post to thread ${thread}`,
      );
    }
    const ref: ConversationRef = { channel: this.name, key: telegramKey(this.name, bot, chatId, thread), chatId, chatType };
    if (thread !== undefined) ref.threadId = thread;
    return ref;
  }

  private async getChat(telegram: Telegram, chatId: string): Promise<ChatInfo> {
    try {
      return (await telegram.getChat(chatId)) as ChatInfo;
    } catch (err) {
      const mapped = mapTelegramError(this.name, err, "getChat");
      // A person who never started the bot is the target's state, not the channel's trouble.
      if (mapped instanceof TargetUnreachableError) throw mapped;
      throw this.calls.note(mapped);
    }
  }
}

function chatTypeOf(type: string): ChatType | undefined {
  if (type === "private") return "direct";
  if (type === "group" || type === "supergroup") return "group";
  return undefined;
}
