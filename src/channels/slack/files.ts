/**
 * Slack files: `download` reads `url_private_download` with the bot token (bounded), and
 * `upload` is file upload v2 through the web client's `filesUploadV2` (a message's `files` become
 * InboundAttachments in attachments.ts). See README.md, "Files, images and voice".
 */
import type { webApi } from "@slack/bolt";
import { ChannelError, FileTooLargeError } from "../../errors.js";
import { readResponse, refuseStatedSize } from "../kit/downloads.js";
import type { ConversationRef, InboundAttachment, MessageHandle, OutboundFile } from "../types.js";
import type { SlackFile } from "./attachments.js";
import { slackDownloadError } from "./map-error.js";

type WebClient = InstanceType<typeof webApi.WebClient>;

/**
 * Slack's limit for one file. Slack says "1 GB"; the adapter reads it as 10^9 bytes, the lower
 * of the two readings, so it never offers Slack a file Slack would refuse.
 */
export const SLACK_MAX_UPLOAD_BYTES = 1_000_000_000;

export interface SlackFilesOptions {
  /** Channel instance name, for errors. */
  channel: string;
  web: WebClient;
  botToken: string;
  /** The Web API base; file URLs on its host also get the token (a fake Slack in tests). */
  apiBase: string;
  /** Runs one Web API call through the adapter's error mapping. */
  call<T>(method: string, run: () => Promise<T>): Promise<T>;
}

/** Downloads and uploads for one Slack channel. */
export class SlackFiles {
  constructor(private readonly o: SlackFilesOptions) {}

  /** Reads one attachment, at most `maxBytes` of it; a size Slack stated up front is checked before any request. */
  async download(attachment: InboundAttachment, maxBytes: number, signal?: AbortSignal): Promise<Uint8Array> {
    refuseStatedSize(this.o.channel, attachment.size, maxBytes);
    const id = attachment.source.id;
    if (typeof id !== "string") throw new ChannelError(this.o.channel, "not_found", "the attachment has no Slack file id");
    const url = typeof attachment.source.url === "string" ? attachment.source.url : await this.urlFromInfo(id, maxBytes);
    // files.info goes through the web client, which takes no signal; the core stops waiting on it.
    signal?.throwIfAborted();
    return this.fetchFile(url, maxBytes, attachment.mime, signal);
  }

  /** File upload v2 into the conversation (its thread, when it has one). Returns the Slack file id. */
  async upload(ref: ConversationRef, file: OutboundFile): Promise<MessageHandle> {
    const size = file.data.byteLength;
    if (size > SLACK_MAX_UPLOAD_BYTES) throw new FileTooLargeError(this.o.channel, SLACK_MAX_UPLOAD_BYTES, size);
    const common = {
      file: Buffer.from(file.data.buffer, file.data.byteOffset, size),
      filename: file.name,
      title: file.name,
      ...(file.kind === "image" ? { alt_text: file.name } : {}),
    };
    const result = await this.o.call("files.uploadV2", () =>
      ref.threadId
        ? this.o.web.filesUploadV2({ ...common, channel_id: ref.chatId, thread_ts: ref.threadId })
        : this.o.web.filesUploadV2({ ...common, channel_id: ref.chatId }),
    );
    const completions = (result as { files?: Array<{ files?: Array<{ id?: string }> }> }).files ?? [];
    const id = completions[0]?.files?.[0]?.id;
    if (!id) throw new ChannelError(this.o.channel, "platform_error", "files.completeUploadExternal returned no file id");
    return { id, ref, extra: { fileId: id } };
  }

  /** `files.info` for a file the event described only by id. */
  private async urlFromInfo(id: string, maxBytes: number): Promise<string> {
    const info = await this.o.call("files.info", () => this.o.web.files.info({ file: id }));
    const file = (info.file ?? {}) as SlackFile;
    if (typeof file.size === "number" && file.size > maxBytes) throw new FileTooLargeError(this.o.channel, maxBytes, file.size);
    const url = file.url_private_download ?? file.url_private;
    if (!url) throw new ChannelError(this.o.channel, "not_found", `files.info: file ${id} has no download URL`);
    return url;
  }

  /** GETs the file with the token; `signal` covers the request and the whole body. */
  private async fetchFile(url: string, maxBytes: number, mime: string | undefined, signal?: AbortSignal): Promise<Uint8Array> {
    const headers = this.tokenGoesTo(url) ? { authorization: `Bearer ${this.o.botToken}` } : undefined;
    if (!headers) throw new ChannelError(this.o.channel, "not_supported", `not downloading a file from ${new URL(url).host}`);
    let res: Response;
    try {
      res = await fetch(url, { headers, redirect: "follow", ...(signal ? { signal } : {}) });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw new ChannelError(this.o.channel, "network", `downloading a file failed: ${(err as Error).message}`, { cause: err });
    }
    const refused = slackDownloadError(this.o.channel, res.status, res.headers.get("content-type"), mime);
    const declared = Number(res.headers.get("content-length") ?? Number.NaN);
    const tooLarge = Number.isFinite(declared) && declared > maxBytes;
    if (refused || tooLarge) {
      await res.body?.cancel().catch(() => {});
      throw refused ?? new FileTooLargeError(this.o.channel, maxBytes, declared);
    }
    return readResponse(this.o.channel, res, maxBytes, signal);
  }

  /** The bot token goes only to Slack's own hosts (and the configured API host), never to a third party. */
  private tokenGoesTo(url: string): boolean {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return false;
    }
    const host = target.hostname;
    if (host === new URL(this.o.apiBase).hostname && target.protocol === new URL(this.o.apiBase).protocol) return true;
    if (target.protocol !== "https:") return false;
    return ["slack.com", "slack-gov.com"].some((d) => host === d || host.endsWith(`.${d}`));
  }
}
