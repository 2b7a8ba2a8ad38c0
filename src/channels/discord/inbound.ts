/**
 * Discord messages and button clicks → `InboundMessage`. Conversation keys (see README.md):
 * a DM is `<name>:@me:<dm channel>`; a thread (one the bot started, a forum post, any other) is
 * `<name>:<guild>:<parent channel>:<thread>`; a server channel message that starts a thread is
 * keyed by that thread before it exists (a thread started from a message takes the message's
 * id); with `thread: false` a channel is `<name>:<guild>:<channel>`, or
 * `<name>:<guild>:<channel>:u<user>` with `session_scope: user`. Attachments come along as
 * `attachments` (files.ts); a message of files alone has the text "".
 */
import type { ButtonInteraction, ChatInputCommandInteraction, Message } from "discord.js";
import { MessageType } from "discord.js";
import type { ConversationRef, InboundMessage } from "../types.js";
import { attachmentsOf } from "./attachments.js";
import { decodeCustomId } from "./buttons.js";

export interface DiscordIdentity {
  id: string;
  name: string;
}

export interface KeyRules {
  /** Channel instance name. */
  name: string;
  thread: boolean;
  scope: "chat" | "user";
}

/** Where a message or click happened, as far as keys care. */
export interface Place {
  guildId: string | null;
  channelId: string;
  /** Set when `channelId` is a thread: its parent channel (a text or forum channel). */
  parentId: string | null;
}

/** Message types that are people talking; the rest (joins, pins, thread notices) are skipped. */
const SPOKEN = new Set<MessageType>([MessageType.Default, MessageType.Reply]);
/** Thread names are 1–100 characters. */
const THREAD_NAME_MAX = 80;

/** Where a message, click or command happened; a thread's parent is known from discord.js's cache. */
export function placeOf(
  event: Pick<Message | ButtonInteraction | ChatInputCommandInteraction, "guildId" | "channelId" | "channel">,
): Place {
  const channel = event.channel;
  const thread = channel && !channel.partial && channel.isThread();
  return {
    guildId: event.guildId,
    channelId: event.channelId,
    parentId: thread ? channel.parentId : null,
  };
}

/** The conversation a place and sender belong to; `startFrom` is the message a new thread would start from. */
export function refFor(
  rules: KeyRules,
  place: Place,
  userId: string,
  startFrom?: { id: string; text: string; user: string },
): ConversationRef {
  const { name } = rules;
  if (!place.guildId) {
    return { channel: name, key: `${name}:@me:${place.channelId}`, chatId: place.channelId, chatType: "direct" };
  }
  const base = { channel: name, chatType: "group" as const, workspace: place.guildId };
  if (place.parentId) {
    return {
      ...base,
      key: `${name}:${place.guildId}:${place.parentId}:${place.channelId}`,
      chatId: place.parentId,
      threadId: place.channelId,
    };
  }
  if (rules.thread && startFrom) {
    return {
      ...base,
      key: `${name}:${place.guildId}:${place.channelId}:${startFrom.id}`,
      chatId: place.channelId,
      threadId: startFrom.id,
      extra: { startThread: true, threadName: threadName(startFrom.text, startFrom.user) },
    };
  }
  const tail = rules.scope === "user" ? `:u${userId}` : "";
  return {
    ...base,
    key: `${name}:${place.guildId}:${place.channelId}${tail}`,
    chatId: place.channelId,
    ...(startFrom ? { replyToId: startFrom.id } : {}),
  };
}

/** A message as the core sees it; undefined for what is not someone talking (system messages). */
export function translateMessage(rules: KeyRules, bot: DiscordIdentity, message: Message): InboundMessage | undefined {
  if (!SPOKEN.has(message.type)) return undefined;
  const place = placeOf(message);
  const fromBot = message.author.bot || message.author.id === bot.id || message.webhookId !== null;
  const direct = !place.guildId;
  const mentioned = direct || addressesBot(bot, message);
  const text = readableText(bot, message);
  const attachments = attachmentsOf(message);
  const user = { id: message.author.id, name: message.author.globalName ?? message.author.username };
  // A file sent without words names its thread.
  const title = text || (attachments[0]?.name ?? "");
  const ref = refFor(rules, place, user.id, { id: message.id, text: title, user: user.name });
  const msg: InboundMessage = {
    channel: rules.name,
    eventId: message.id,
    ref,
    user,
    text,
    mentioned,
    sentAt: message.createdTimestamp,
  };
  if (attachments.length > 0) msg.attachments = attachments;
  if (place.parentId) msg.inThread = true;
  if (fromBot) msg.fromBot = true;
  return msg;
}

/** A click on one of Antler's buttons; undefined for buttons Antler did not make. */
export function translateClick(rules: KeyRules, interaction: ButtonInteraction): InboundMessage | undefined {
  const target = decodeCustomId(interaction.customId);
  if (!target) return undefined;
  const ref = refFor({ ...rules, thread: false, scope: "chat" }, placeOf(interaction), interaction.user.id);
  if (target.keyTail) {
    ref.key += target.keyTail;
    // A thread the bot could not start: its replies went to the channel, under the thread's key.
    const started = /^:(\d+)$/.exec(target.keyTail);
    if (started?.[1]) {
      ref.threadId = started[1];
      ref.extra = { startThread: true, threadName: "" };
    }
  }
  return {
    channel: rules.name,
    eventId: `interaction:${interaction.id}`,
    ref,
    user: { id: interaction.user.id, name: interaction.user.globalName ?? interaction.user.username },
    text: "",
    mentioned: true,
    action: {
      questionId: target.questionId,
      buttonId: target.buttonId,
      messageId: interaction.message.id,
      callbackId: interaction.id,
    },
    sentAt: interaction.createdTimestamp,
  };
}

/** A slash command as the text command the core knows (`/status`). */
export function translateCommand(rules: KeyRules, interaction: ChatInputCommandInteraction): InboundMessage {
  return {
    channel: rules.name,
    eventId: `interaction:${interaction.id}`,
    ref: refFor({ ...rules, thread: false }, placeOf(interaction), interaction.user.id),
    user: { id: interaction.user.id, name: interaction.user.globalName ?? interaction.user.username },
    text: `/${interaction.commandName}`,
    mentioned: true,
    sentAt: interaction.createdTimestamp,
  };
}

/**
 * The key's part that the channel a message is posted in does not show: what a click on that
 * message must add to find its conversation again.
 */
export function keyTail(ref: ConversationRef, postedIn: string): string {
  if (!ref.workspace || postedIn !== ref.chatId) return "";
  const base = `${ref.channel}:${ref.workspace}:${ref.chatId}`;
  return ref.key.startsWith(base) ? ref.key.slice(base.length) : "";
}

/** @mentioned (the user or the bot's own role), or a reply to one of the bot's messages. */
function addressesBot(bot: DiscordIdentity, message: Message): boolean {
  if (message.mentions.users.has(bot.id)) return true;
  if (message.mentions.repliedUser?.id === bot.id) return true;
  return message.mentions.roles.some((role) => role.tags?.botId === bot.id);
}

/** The content with the bot's mention cut out, other mentions shown by name, and trimmed. */
function readableText(bot: DiscordIdentity, message: Message): string {
  const roleIds = new Set(message.mentions.roles.filter((role) => role.tags?.botId === bot.id).map((role) => role.id));
  return message.content
    .replace(/<@!?(\d+)>/g, (whole, id: string) => {
      if (id === bot.id) return "";
      const user = message.mentions.users.get(id);
      return user ? `@${user.globalName ?? user.username}` : whole;
    })
    .replace(/<@&(\d+)>/g, (whole, id: string) => (roleIds.has(id) ? "" : whole))
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

function threadName(text: string, user: string): string {
  const line =
    text
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.trim() ?? "";
  const name = line || `Conversation with ${user}`;
  return name.length > THREAD_NAME_MAX ? `${name.slice(0, THREAD_NAME_MAX - 1)}…` : name;
}
