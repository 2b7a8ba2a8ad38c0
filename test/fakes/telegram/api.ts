/**
 * The Bot API methods the fake serves, with the real error texts. Each handler either returns
 * the `result` or throws an {@link ApiError}; the HTTP layer (index.ts) wraps both.
 */
import { ChatStore, type FakeButton, type FakeChat, type FakeUser } from "./chats.js";
import {
  DOWNLOAD_LIMIT,
  type FileStore,
  isUpload,
  looksLikeImage,
  type MediaKind,
  type MessageMedia,
  PHOTO_LIMIT,
  UPLOAD_LIMIT,
} from "./files.js";
import { HtmlParseError, type ParsedText, parseHtml, parsePlain } from "./html.js";
import type { UpdateQueue } from "./updates.js";

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly parameters?: { retry_after?: number },
  ) {
    super(description);
  }
}

export const MAX_TEXT = 4096;
const SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/;
const NOT_MODIFIED =
  "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";

export interface CallbackRecord {
  id: string;
  at: number;
  /** Who clicked: the only person who sees the answer's text. */
  from?: FakeUser;
  answeredAt?: number;
  text?: string;
  /** The text showed as an alert the user must dismiss, not a toast. */
  showAlert?: boolean;
}

type Params = Record<string, unknown>;

export class BotApi {
  readonly callbacks = new Map<string, CallbackRecord>();
  /** getFile states `file_size`; the Bot API marks it optional, so tests can turn it off. */
  getFileStatesSize = true;

  constructor(
    readonly bot: FakeUser & { username: string },
    private readonly chats: ChatStore,
    private readonly updates: UpdateQueue,
    private readonly files: FileStore,
  ) {}

  /** Runs one method. getUpdates is served by the HTTP layer because it long-polls. */
  call(method: string, p: Params): unknown {
    switch (method) {
      case "getMe":
        return {
          ...this.bot,
          is_bot: true,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        };
      case "deleteWebhook":
        this.updates.setWebhook(undefined, p.drop_pending_updates === true);
        return true;
      case "setWebhook":
        return this.setWebhook(p);
      case "getWebhookInfo":
        return {
          url: this.updates.webhook?.url ?? "",
          has_custom_certificate: false,
          pending_update_count: this.updates.pendingCount,
        };
      case "sendMessage":
        return this.sendMessage(p);
      case "editMessageText":
        return this.editMessageText(p);
      case "getChat":
        return this.getChat(p);
      case "sendChatAction":
        this.postable(p.chat_id).typing.push(Date.now());
        return true;
      case "answerCallbackQuery":
        return this.answerCallbackQuery(p);
      case "getFile":
        return this.getFile(p);
      case "sendPhoto":
        return this.sendMedia(p, "photo");
      case "sendDocument":
        return this.sendMedia(p, "document");
      case "deleteMessage": {
        const m = this.chats.find(this.chat(p.chat_id).id, Number(p.message_id));
        if (!m) throw new ApiError(400, "Bad Request: message to delete not found");
        m.deleted = true;
        return true;
      }
      default:
        throw new ApiError(404, "Not Found");
    }
  }

  private setWebhook(p: Params): true {
    const url = typeof p.url === "string" ? p.url : "";
    if (url === "") {
      this.updates.setWebhook(undefined);
      return true;
    }
    if (!/^https?:\/\//.test(url)) throw new ApiError(400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook");
    const secret = p.secret_token;
    if (secret !== undefined && (typeof secret !== "string" || !SECRET_TOKEN.test(secret))) {
      throw new ApiError(400, "Bad Request: bad webhook: secret token contains unallowed characters");
    }
    this.updates.setWebhook({ url, ...(typeof secret === "string" ? { secret } : {}) }, p.drop_pending_updates === true);
    return true;
  }

  private chat(id: unknown) {
    const chat = this.chats.get(Number(id));
    if (!chat) throw new ApiError(400, "Bad Request: chat not found");
    return chat;
  }

  /**
   * The chat a new message goes to, refused as Telegram refuses it: a user the bot never talked
   * with (a private chat exists only once they wrote to the bot) gets 403, as does one who blocked
   * the bot; a chat nobody knows, or the bot is not in, is "chat not found".
   */
  private postable(id: unknown) {
    const chat = this.chats.get(Number(id));
    if (!chat) {
      if (this.chats.users.has(Number(id))) throw new ApiError(403, "Forbidden: bot can't initiate conversation with a user");
      throw new ApiError(400, "Bad Request: chat not found");
    }
    if (chat.type === "private" && this.chats.blocked.has(chat.id))
      throw new ApiError(403, "Forbidden: bot was blocked by the user");
    return chat;
  }

  /** getChat: what the bot may know of a chat it is in, or of a user who started it. */
  private getChat(p: Params) {
    const chat = this.chats.get(Number(p.chat_id));
    if (!chat) throw new ApiError(400, "Bad Request: chat not found");
    if (chat.type === "private") {
      const user = this.chats.users.get(chat.id);
      return {
        id: chat.id,
        type: "private",
        first_name: user?.first_name ?? "",
        ...(user?.username ? { username: user.username } : {}),
      };
    }
    return { id: chat.id, type: chat.type, title: chat.title ?? `Chat ${chat.id}`, ...(chat.isForum ? { is_forum: true } : {}) };
  }

  private sendMessage(p: Params) {
    const chat = this.postable(p.chat_id);
    const parsed = parseText(p);
    const keyboard = parseKeyboard(p.reply_markup);
    const now = Date.now();
    const message = this.chats.add(
      chat,
      {
        from: this.bot,
        fromBot: true,
        text: parsed.text,
        entities: parsed.entities,
        keyboard,
        date: now,
        ...this.placement(chat, p),
      },
      now,
    );
    return ChatStore.toApi(chat, message);
  }

  /** The topic and the quoted message of a new bot message. Multipart requests carry JSON as a string. */
  private placement(chat: FakeChat, p: Params): { threadId?: number; replyTo?: number } {
    const thread = p.message_thread_id === undefined ? undefined : Number(p.message_thread_id);
    if (thread !== undefined && chat.isForum && !this.chats.hasTopic(chat, thread))
      throw new ApiError(400, "Bad Request: message thread not found");
    const raw = typeof p.reply_parameters === "string" ? JSON.parse(p.reply_parameters) : p.reply_parameters;
    const replyParams = raw as { message_id?: number; allow_sending_without_reply?: boolean } | undefined;
    let replyTo: number | undefined;
    if (replyParams?.message_id !== undefined) {
      const target = this.chats.find(chat.id, replyParams.message_id);
      if (!target && !replyParams.allow_sending_without_reply)
        throw new ApiError(400, "Bad Request: message to be replied not found");
      replyTo = target?.message_id;
    }
    return { ...(thread !== undefined ? { threadId: thread } : {}), ...(replyTo !== undefined ? { replyTo } : {}) };
  }

  private getFile(p: Params) {
    const file = typeof p.file_id === "string" ? this.files.get(p.file_id) : undefined;
    if (!file) throw new ApiError(400, "Bad Request: invalid file_id");
    if (file.data.byteLength > DOWNLOAD_LIMIT) throw new ApiError(400, "Bad Request: file is too big");
    return {
      file_id: file.file_id,
      file_unique_id: file.file_unique_id,
      ...(this.getFileStatesSize ? { file_size: file.data.byteLength } : {}),
      file_path: file.file_path,
    };
  }

  /** sendPhoto / sendDocument: a new upload (multipart) or a file_id already on the server. */
  private sendMedia(p: Params, kind: MediaKind) {
    const chat = this.postable(p.chat_id);
    const media = this.uploaded(p[kind], kind);
    const caption = typeof p.caption === "string" ? p.caption : "";
    if (caption.length > 1024) throw new ApiError(400, "Bad Request: message caption is too long");
    const now = Date.now();
    const message = this.chats.add(
      chat,
      { from: this.bot, fromBot: true, text: caption, entities: [], keyboard: [], media, date: now, ...this.placement(chat, p) },
      now,
    );
    return ChatStore.toApi(chat, message);
  }

  private uploaded(value: unknown, kind: MediaKind): MessageMedia {
    if (typeof value === "string" && value !== "") {
      const known = this.files.get(value);
      if (!known) throw new ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified");
      return { kind, file: known };
    }
    if (!isUpload(value)) throw new ApiError(400, `Bad Request: there is no ${kind} in the request`);
    const size = value.data.byteLength;
    if (size === 0) throw new ApiError(400, "Bad Request: file must be non-empty");
    if (size > UPLOAD_LIMIT) throw new ApiError(413, "Request Entity Too Large");
    if (kind === "photo" && size > PHOTO_LIMIT) throw new ApiError(400, "Bad Request: PHOTO_SAVE_FILE_INVALID");
    if (kind === "photo" && !looksLikeImage(value.data)) throw new ApiError(400, "Bad Request: IMAGE_PROCESS_FAILED");
    return this.files.media(kind, value.data, { name: value.filename });
  }

  private editMessageText(p: Params) {
    const chat = this.chat(p.chat_id);
    const message = this.chats.find(chat.id, Number(p.message_id));
    if (!message) throw new ApiError(400, "Bad Request: message to edit not found");
    if (!message.fromBot) throw new ApiError(400, "Bad Request: message can't be edited");
    const parsed = parseText(p);
    const keyboard = parseKeyboard(p.reply_markup);
    const same =
      parsed.text === message.text &&
      JSON.stringify(parsed.entities) === JSON.stringify(message.entities) &&
      JSON.stringify(keyboard) === JSON.stringify(message.keyboard);
    if (same) throw new ApiError(400, NOT_MODIFIED);
    message.text = parsed.text;
    message.entities = parsed.entities;
    message.keyboard = keyboard;
    const last = message.versions[message.versions.length - 1];
    if (last?.text !== parsed.text) message.versions.push({ text: parsed.text, at: Date.now() });
    return { ...ChatStore.toApi(chat, message), edit_date: Math.floor(Date.now() / 1000) };
  }

  private answerCallbackQuery(p: Params): true {
    const record = this.callbacks.get(String(p.callback_query_id));
    if (!record || record.answeredAt !== undefined) {
      throw new ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid");
    }
    record.answeredAt = Date.now();
    if (typeof p.text === "string") {
      if (p.text.length > 200) throw new ApiError(400, "Bad Request: MESSAGE_TOO_LONG");
      record.text = p.text;
    }
    if (p.show_alert === true) record.showAlert = true;
    return true;
  }
}

function parseText(p: Params): ParsedText {
  if (typeof p.text !== "string") throw new ApiError(400, "Bad Request: message text is empty");
  let parsed: ParsedText;
  try {
    if (p.parse_mode === "HTML") parsed = parseHtml(p.text);
    else if (p.parse_mode === undefined || p.parse_mode === "") parsed = parsePlain(p.text);
    else throw new ApiError(400, `Bad Request: unsupported parse_mode "${String(p.parse_mode)}" in this fake`);
  } catch (err) {
    if (err instanceof HtmlParseError) throw new ApiError(400, err.message);
    throw err;
  }
  if (parsed.text === "") throw new ApiError(400, "Bad Request: message text is empty");
  if (parsed.text.length > MAX_TEXT) throw new ApiError(400, "Bad Request: message is too long");
  return parsed;
}

function parseKeyboard(markup: unknown): FakeButton[][] {
  if (markup === undefined || markup === null) return [];
  if (typeof markup === "string") markup = JSON.parse(markup);
  const rows = (markup as { inline_keyboard?: unknown }).inline_keyboard;
  if (!Array.isArray(rows)) throw new ApiError(400, "Bad Request: can't parse reply keyboard markup JSON object");
  return rows.map((row) => {
    if (!Array.isArray(row))
      throw new ApiError(400, "Bad Request: can't parse inline keyboard button: InlineKeyboardButton must be an Object");
    return row.map((b: FakeButton) => {
      if (typeof b.text !== "string" || b.text === "") throw new ApiError(400, "Bad Request: BUTTON_TEXT_INVALID");
      const bytes = b.callback_data === undefined ? 0 : Buffer.byteLength(b.callback_data, "utf8");
      if (b.callback_data !== undefined && (bytes < 1 || bytes > 64)) throw new ApiError(400, "Bad Request: BUTTON_DATA_INVALID");
      return { text: b.text, ...(b.callback_data !== undefined ? { callback_data: b.callback_data } : {}) };
    });
  });
}
