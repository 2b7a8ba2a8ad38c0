/**
 * What the fake Telegram remembers: chats, the messages in them (with every version a user saw),
 * and the users' side of a conversation. The server (server.ts) turns Bot API calls into
 * changes here; tests read it to see what a person in the chat would see.
 */
import { type MessageMedia, mediaToApi } from "./files.js";
import type { FakeEntity } from "./html.js";

export interface FakeUser {
  id: number;
  first_name: string;
  username?: string;
  is_bot?: boolean;
}

export interface FakeButton {
  text: string;
  callback_data?: string;
}

export interface ChatMessage {
  message_id: number;
  chatId: number;
  from: FakeUser;
  fromBot: boolean;
  /** Text as shown (markup removed); a file's caption, "" when it has none. */
  text: string;
  entities: FakeEntity[];
  keyboard: FakeButton[][];
  threadId?: number;
  replyTo?: number;
  /** The photo, document, voice note or audio file the message carries. */
  media?: MessageMedia;
  date: number;
  deleted: boolean;
  /** Every text the user saw, oldest first, with when it appeared (ms). */
  versions: Array<{ text: string; at: number }>;
}

export type ChatKind = "private" | "group" | "supergroup";

export interface FakeChat {
  id: number;
  type: ChatKind;
  title?: string;
  isForum: boolean;
  messages: ChatMessage[];
  nextMessageId: number;
  /** Times of sendChatAction calls (ms). */
  typing: number[];
  /** Forum topics opened without a message yet (`openTopic`). */
  topics: Set<number>;
}

export class ChatStore {
  private readonly chats = new Map<number, FakeChat>();
  /** People Telegram knows because they wrote somewhere the bot sees; a private chat exists only once they wrote to the bot. */
  readonly users = new Map<number, FakeUser>();
  /** Users who blocked the bot: their private chat stays, sends to it are refused. */
  readonly blocked = new Set<number>();

  ensure(id: number, type: ChatKind, options: { title?: string; isForum?: boolean } = {}): FakeChat {
    let chat = this.chats.get(id);
    if (!chat) {
      chat = { id, type, isForum: options.isForum ?? false, messages: [], nextMessageId: 1, typing: [], topics: new Set() };
      if (options.title) chat.title = options.title;
      this.chats.set(id, chat);
    }
    return chat;
  }

  get(id: number | string): FakeChat | undefined {
    return this.chats.get(Number(id));
  }

  add(chat: FakeChat, message: Omit<ChatMessage, "message_id" | "chatId" | "deleted" | "versions">, at: number): ChatMessage {
    const full: ChatMessage = {
      ...message,
      message_id: chat.nextMessageId++,
      chatId: chat.id,
      deleted: false,
      versions: [{ text: message.text, at }],
    };
    chat.messages.push(full);
    if (!message.fromBot) this.users.set(message.from.id, message.from);
    return full;
  }

  /** A forum's topics: the thread ids its messages were posted in. */
  hasTopic(chat: FakeChat, threadId: number): boolean {
    return chat.topics.has(threadId) || chat.messages.some((m) => m.threadId === threadId);
  }

  find(chatId: number | string, messageId: number | string): ChatMessage | undefined {
    return this.get(chatId)?.messages.find((m) => m.message_id === Number(messageId) && !m.deleted);
  }

  /** The Bot API's JSON form of a message. */
  static toApi(chat: FakeChat, m: ChatMessage): Record<string, unknown> {
    const out: Record<string, unknown> = {
      message_id: m.message_id,
      from: { is_bot: m.fromBot, ...m.from },
      chat: {
        id: chat.id,
        type: chat.type,
        ...(chat.title ? { title: chat.title } : {}),
        ...(chat.isForum ? { is_forum: true } : {}),
      },
      date: Math.floor(m.date / 1000),
    };
    if (m.media) {
      Object.assign(out, mediaToApi(m.media));
      if (m.text !== "") out.caption = m.text;
      if (m.entities.length > 0) out.caption_entities = m.entities;
    } else {
      out.text = m.text;
      if (m.entities.length > 0) out.entities = m.entities;
    }
    if (m.keyboard.length > 0) out.reply_markup = { inline_keyboard: m.keyboard };
    if (m.threadId !== undefined) {
      out.message_thread_id = m.threadId;
      if (chat.isForum) out.is_topic_message = true;
    }
    if (m.replyTo !== undefined) {
      const target = chat.messages.find((x) => x.message_id === m.replyTo);
      if (target) out.reply_to_message = ChatStore.toApi(chat, { ...target, replyTo: undefined });
    }
    return out;
  }
}

/** Mention and command entities a Telegram client would attach to what a user typed. */
export function userEntities(text: string): FakeEntity[] {
  const entities: FakeEntity[] = [];
  const command = /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text);
  if (command) entities.push({ type: "bot_command", offset: 0, length: command[0].length });
  for (const m of text.matchAll(/(^|[^\w@/])(@[A-Za-z][A-Za-z0-9_]{3,31})/g)) {
    entities.push({ type: "mention", offset: (m.index ?? 0) + (m[1] as string).length, length: (m[2] as string).length });
  }
  return entities;
}
