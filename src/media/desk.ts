/**
 * Files, images and voice between the chat and the agent. When a message with attachments runs,
 * `intake` checks each one against `media:` (type and size), downloads it through its channel,
 * stores it in the thread's folder, and turns it into what the model reads: images as image
 * blocks (for a model marked `supports_vision`), voice notes as their transcript, and every file
 * listed in the message so the agent can `read_file` it. After the run, `deliver` posts the files
 * the agent chose with `send_file`. Whatever is refused gets a notice, and the message's text is
 * still handled.
 */
import { readFile } from "node:fs/promises";
import { mimeFromName } from "../channels/kit/downloads.js";
import type { Channel, ConversationRef, InboundAttachment, InboundMessage, OutboundFile } from "../channels/types.js";
import type { MediaConfig } from "../config/schema.js";
import { errorMessage, FileTooLargeError } from "../errors.js";
import { type FileOutbox, sizeText, type ThreadFile, type ThreadFiles } from "../harness/files.js";
import type { RunImage } from "../harness/types.js";
import type { Logger } from "../log/logger.js";
import { limitText, TimeLimit } from "./time-limit.js";
import { transcribe } from "./transcribe.js";

export interface MediaDeskOptions {
  config: MediaConfig;
  /** How long one file upload (`send_file`) may take; the gateway's `platform_call_timeout_ms`. */
  uploadTimeoutMs?: number;
  files: ThreadFiles;
  outbox: FileOutbox;
  logger: Logger;
  /** Whether the model behind `agent` reads images. */
  vision(agent: string): boolean;
}

/** A message's attachments, made into the run's input. */
export interface Intake {
  /** The text the agent reads: transcripts, the user's text, and the list of stored files. */
  text: string;
  images: RunImage[];
  /** What to tell the user first (refused files, an echoed transcript). */
  notices: string[];
}

/** The MIME type a file name suggests, for files the platform sent without one. */
export function mimeOf(name: string, given?: string): string {
  const clean = given?.split(";")[0]?.trim().toLowerCase();
  if (clean && clean !== "application/octet-stream") return clean;
  return mimeFromName(name) ?? clean ?? "application/octet-stream";
}

/** The image type the bytes themselves show (platforms like Feishu name no type, or a wrong one). */
export function sniffImage(data: Uint8Array): string | undefined {
  const head = Buffer.from(data.subarray(0, 12));
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "image/jpeg";
  if (head.subarray(0, 4).toString("latin1") === "GIF8") return "image/gif";
  if (head.subarray(0, 4).toString("latin1") === "RIFF" && head.subarray(8, 12).toString("latin1") === "WEBP")
    return "image/webp";
  return undefined;
}

/** How long a file upload may take when the gateway names no limit (its `platform_call_timeout_ms` default). */
const DEFAULT_UPLOAD_TIMEOUT_MS = 30_000;

/** One attachment after its checks and download: its bytes, or the notice that says why not. */
interface Fetched {
  attachment: InboundAttachment;
  mime: string;
  data?: Uint8Array;
  notice?: string;
}

/** Images a model reads directly; other image types are stored and listed. */
const VIEWABLE = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export class MediaDesk {
  readonly maxBytes: number;

  constructor(private readonly options: MediaDeskOptions) {
    this.maxBytes = Math.floor(options.config.max_file_mb * 1024 * 1024);
  }

  allowed(mime: string): boolean {
    return this.options.config.allowed_types.some((t) =>
      t.endsWith("/*") ? mime.startsWith(t.slice(0, -1)) : mime === t.toLowerCase(),
    );
  }

  /**
   * The run's input from `msg`'s attachments. `stop` is the conversation's `/stop`: once it aborts,
   * downloads and transcriptions end, and what is left is dropped without notices (the caller
   * says the message was stopped).
   */
  async intake(channel: Channel, msg: InboundMessage, threadId: string, agent: string, stop?: AbortSignal): Promise<Intake> {
    const notices: string[] = [];
    const images: RunImage[] = [];
    const transcripts: string[] = [];
    const listed: string[] = [];
    const vision = this.options.vision(agent);
    // Every file downloads at once, each within its limit: the message waits for one limit at most.
    const fetched = await Promise.all((msg.attachments ?? []).map((a) => this.fetch(channel, msg, a, stop)));
    if (stop?.aborted) return { text: "", images: [], notices: [] };
    for (const { attachment, mime: given, data, notice } of fetched) {
      if (notice) notices.push(notice);
      if (!data) continue;
      const file = await this.options.files.save(threadId, attachment.name || "file", data);
      const mime = attachment.kind === "image" ? (sniffImage(data) ?? given) : given;
      const about = `${file.name} (${mime}, ${sizeText(file.bytes)})`;
      if (attachment.kind === "image" && vision && VIEWABLE.has(mime)) {
        images.push({ mime, base64: Buffer.from(data).toString("base64") });
        listed.push(`- ${about}: shown to you as an image`);
      } else if (attachment.kind === "image") {
        listed.push(`- ${about}: an image; you cannot see images here`);
      } else if (attachment.kind === "audio") {
        const text = await this.transcript(file, mime, data, notices, recognitionOf(attachment), stop);
        if (stop?.aborted) return { text: "", images: [], notices: [] };
        if (text !== undefined) {
          transcripts.push(`[Voice note ${file.name}]: ${text}`);
          if (this.options.config.transcription.echo) notices.push(`🎤 “${text}”`);
          listed.push(`- ${about}: a voice note, transcribed above`);
        } else {
          listed.push(`- ${about}: a voice note that could not be transcribed`);
        }
      } else {
        listed.push(`- ${about}: read it with read_file`);
      }
    }
    const parts = [...transcripts];
    if (msg.text.trim()) parts.push(msg.text);
    if (listed.length > 0) {
      parts.push(
        `<uploaded_files>\nThe user sent these files with this message; they are in this conversation's files:\n${listed.join("\n")}\n</uploaded_files>`,
      );
    }
    return { text: parts.join("\n\n"), images, notices };
  }

  /**
   * Posts the files the agent chose with `send_file` (or a remote run presented) in this run;
   * returns notices for those that could not go. A failed upload's error goes to the log and to `onError` (the channel's status),
   * never into the notice.
   */
  async deliver(channel: Channel, ref: ConversationRef, threadId: string, onError?: (err: unknown) => void): Promise<string[]> {
    // Files the agent presented that never reached the outbox (a remote run's failed fetch) come first.
    const notices = this.options.outbox.takeNotices(threadId);
    for (const file of this.options.outbox.take(threadId)) {
      if (!channel.sendFile) {
        notices.push(`This chat cannot receive files, so “${file.name}” was not sent.`);
        continue;
      }
      const limit = Math.min(this.maxBytes, channel.maxUploadBytes ?? Number.POSITIVE_INFINITY);
      if (file.bytes > limit) {
        notices.push(
          `“${file.name}” is ${sizeText(file.bytes)}, over the ${sizeText(limit)} this chat takes, so it was not sent.`,
        );
        continue;
      }
      const mime = mimeOf(file.name);
      try {
        const data = new Uint8Array(await readFile(file.path));
        const outbound = { name: file.name, mime, data, kind: VIEWABLE.has(mime) ? ("image" as const) : ("file" as const) };
        await this.upload(channel, ref, outbound);
      } catch (err) {
        this.options.logger.warn({ err: errorMessage(err), file: file.name }, "sending a file failed");
        onError?.(err);
        notices.push(`I couldn't send “${file.name}”. Please ask again in a moment.`);
      }
    }
    return notices;
  }

  /** `sendFile` within the upload limit (the platform's own timeout may be none). */
  private async upload(channel: Channel, ref: ConversationRef, file: OutboundFile): Promise<void> {
    const ms = this.options.uploadTimeoutMs ?? DEFAULT_UPLOAD_TIMEOUT_MS;
    const limit = new TimeLimit(ms, `sending “${file.name}”`);
    await limit.run(channel.sendFile!(ref, file));
  }

  /** Checks and downloads one attachment; no `data` (with a notice, unless stopped) when it is refused. */
  private async fetch(
    channel: Channel,
    msg: InboundMessage,
    attachment: InboundAttachment,
    stop: AbortSignal | undefined,
  ): Promise<Fetched> {
    const name = attachment.name || "file";
    const mime = mimeOf(name, attachment.mime);
    const refused = (notice: string): Fetched => ({ attachment, mime, notice });
    if (!this.allowed(mime)) {
      return refused(`I can't take “${name}” (${mime}): this chat accepts ${this.options.config.allowed_types.join(", ")}.`);
    }
    if (attachment.size !== undefined && attachment.size > this.maxBytes) {
      return refused(tooLarge(name, attachment.size, this.maxBytes));
    }
    if (!channel.download) return refused(`This chat cannot pass files to the agent, so I didn't read “${name}”.`);
    const ms = this.options.config.download_timeout_ms;
    const limit = new TimeLimit(ms, `downloading “${name}”`, stop);
    let data: Uint8Array;
    try {
      data = await limit.run(channel.download(msg, attachment, this.maxBytes, { signal: limit.signal }));
    } catch (err) {
      if (stop?.aborted) return { attachment, mime };
      if (err instanceof FileTooLargeError) return refused(tooLarge(name, err.size, this.maxBytes));
      const log = { err: errorMessage(err), channel: msg.channel, file: name };
      if (limit.expired) {
        this.options.logger.warn({ ...log, timeoutMs: ms }, "downloading an attachment took too long; gave up");
        return refused(`I couldn't download “${name}” within ${limitText(ms)}. Please send it again.`);
      }
      this.options.logger.warn(log, "downloading an attachment failed");
      return refused(`I couldn't download “${name}”. Please send it again.`);
    }
    if (data.byteLength > this.maxBytes) return refused(tooLarge(name, data.byteLength, this.maxBytes));
    return { attachment, mime, data };
  }

  private async transcript(
    file: ThreadFile,
    mime: string,
    data: Uint8Array,
    notices: string[],
    platform: string | undefined,
    stop: AbortSignal | undefined,
  ): Promise<string | undefined> {
    if (!this.options.config.transcription.base_url) {
      // Some platforms transcribe voice themselves (DingTalk's `recognition`): better than nothing.
      if (platform) return platform;
      notices.push(`Voice notes can't be transcribed here, so I couldn't listen to “${file.name}”.`);
      return undefined;
    }
    try {
      return await transcribe(this.options.config.transcription, { name: file.name, mime, data }, stop);
    } catch (err) {
      if (stop?.aborted) return undefined;
      this.options.logger.warn({ err: errorMessage(err), file: file.name }, "transcribing a voice note failed");
      notices.push(`I couldn't transcribe “${file.name}”. Please try again, or type it.`);
      return undefined;
    }
  }
}

/** The platform's own transcript of a voice note, where the adapter passed one on (`source.recognition`). */
function recognitionOf(attachment: InboundAttachment): string | undefined {
  const text = attachment.source.recognition;
  return typeof text === "string" && text.trim() ? text.trim() : undefined;
}

function tooLarge(name: string, size: number | undefined, max: number): string {
  const what = size === undefined ? `“${name}” is larger than` : `“${name}” is ${sizeText(size)}, over`;
  return `${what} the ${sizeText(max)} limit, so I didn't read it.`;
}

export { sizeText };
