/**
 * Files through the Bot API: downloads by getFile and the file URL (read by `fetchBounded`, so
 * an over-limit file costs at most the limit), uploads by multipart sendPhoto/sendDocument.
 */
import { isAbsolute } from "node:path";
import type { Telegram } from "telegraf";
import { TelegramError } from "telegraf";
import { ChannelError, errorMessage, FileTooLargeError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { fetchBounded, refuseStatedSize } from "../kit/downloads.js";
import type { PlatformCalls } from "../kit/platform-call.js";
import type { ConversationRef, InboundAttachment, MessageHandle, OutboundFile } from "../types.js";
import { DOWNLOAD_LIMIT, PHOTO_LIMIT, UPLOAD_LIMIT } from "./attachments.js";

/** Image types Telegram shows as a photo; others (GIF, SVG, …) go as documents, unchanged. */
const PHOTO_TYPES = new Set(["image/jpeg", "image/png", "image/webp"]);
/** sendPhoto's refusals of the picture itself; the same bytes then go as a document. */
const PHOTO_REFUSED = /PHOTO_INVALID_DIMENSIONS|PHOTO_SAVE_FILE_INVALID|IMAGE_PROCESS_FAILED|PHOTO_EXT_INVALID/i;

export class TelegramFiles {
  constructor(
    private readonly channel: string,
    private readonly telegram: () => Telegram,
    private readonly logger: Logger,
    /** Bot API calls, their failures mapped and noted on the channel's status. */
    private readonly calls: PlatformCalls,
  ) {}

  /**
   * getFile, then GET the file URL, refusing past `maxBytes` (and past the Bot API's 20 MiB).
   * `signal` reaches both requests, the file's body included.
   */
  async download(attachment: InboundAttachment, maxBytes: number, signal?: AbortSignal): Promise<Uint8Array> {
    const fileId = attachment.source.file_id;
    if (typeof fileId !== "string" || fileId === "") {
      throw new ChannelError(this.channel, "not_found", `attachment "${attachment.name}" has no Telegram file_id`);
    }
    const limit = Math.min(maxBytes, DOWNLOAD_LIMIT);
    refuseStatedSize(this.channel, attachment.size, limit);
    const telegram = this.telegram();
    // telegraf types the signal as its polyfill's; its node-fetch takes Node's own.
    const options = (signal ? { signal } : {}) as Parameters<Telegram["callApi"]>[2];
    const file = await this.calls.run("getFile", () => telegram.callApi("getFile", { file_id: fileId }, options), signal);
    refuseStatedSize(this.channel, file.file_size, limit);
    if (!file.file_path) throw new ChannelError(this.channel, "platform_error", "getFile answered without a file_path");
    if (isAbsolute(file.file_path)) {
      throw new ChannelError(
        this.channel,
        "not_supported",
        "getFile gave a path on the Bot API server's disk (a local server in --local mode); Antler downloads files over HTTP only",
      );
    }
    const url = await telegram.getFileLink(file);
    return fetchBounded(this.channel, url.href, limit, signal ? { signal } : {});
  }

  /** A photo when Telegram can show the image as one, else a document; in the reply's topic. */
  async sendFile(ref: ConversationRef, file: OutboundFile): Promise<MessageHandle> {
    const size = file.data.byteLength;
    if (size > UPLOAD_LIMIT) throw new FileTooLargeError(this.channel, UPLOAD_LIMIT, size);
    const input = () => ({ source: Buffer.from(file.data.buffer, file.data.byteOffset, size), filename: file.name });
    const extra = placement(ref) as never;
    const telegram = this.telegram();
    if (file.kind === "image" && PHOTO_TYPES.has(file.mime) && size <= PHOTO_LIMIT) {
      try {
        const sent = await telegram.sendPhoto(ref.chatId, input(), extra);
        return { id: String(sent.message_id), ref };
      } catch (err) {
        if (!(err instanceof TelegramError && err.code === 400 && PHOTO_REFUSED.test(err.description))) {
          throw this.calls.failure(err, "sendPhoto");
        }
        this.logger.info({ file: file.name, err: errorMessage(err) }, "sendPhoto refused the image; sending it as a document");
      }
    }
    const sent = await this.calls.run("sendDocument", () => telegram.sendDocument(ref.chatId, input(), extra));
    return { id: String(sent.message_id), ref };
  }
}

/**
 * Where the file goes: the topic of the conversation and, in groups, under the user's message,
 * as `send` places text. In a multipart request telegraf sends only scalars and a few known
 * JSON fields, so `reply_parameters` is serialised here.
 */
function placement(ref: ConversationRef): Record<string, string | number> {
  const extra: Record<string, string | number> = {};
  if (ref.threadId) extra.message_thread_id = Number(ref.threadId);
  if (ref.replyToId) {
    extra.reply_parameters = JSON.stringify({ message_id: Number(ref.replyToId), allow_sending_without_reply: true });
  }
  return extra;
}
