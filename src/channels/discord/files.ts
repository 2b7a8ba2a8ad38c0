/**
 * Files on Discord (a message's attachments become `InboundAttachment`s in attachments.ts). A
 * download reads the attachment's CDN link (no auth), and when that signed link has expired it asks the message for
 * a fresh one. Uploads are the multipart form of `POST /channels/:id/messages`.
 */
import type { APIMessage, RawFile } from "discord.js";
import { ChannelError } from "../../errors.js";
import { fetchBounded, refuseStatedSize } from "../kit/downloads.js";
import type { InboundAttachment, InboundMessage, OutboundFile } from "../types.js";
import type { DiscordFileSource } from "./attachments.js";

/** Discord's upload limit per file in a server without boosts, and in DMs: 10 MiB. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

/** Reads `attachment.source` back; a source this adapter did not make is a clear error. */
export function sourceOf(channel: string, attachment: InboundAttachment): DiscordFileSource {
  const s = attachment.source;
  const fields = [s.url, s.id, s.channelId, s.messageId];
  if (!fields.every((f) => typeof f === "string" && f !== "")) {
    throw new ChannelError(
      channel,
      "platform_error",
      `attachment "${attachment.name}" has no Discord url, id, channelId and messageId`,
    );
  }
  return s as unknown as DiscordFileSource;
}

/**
 * Downloads an attachment, at most `maxBytes` of it. The size Discord stated is checked first,
 * so an over-limit file is not fetched at all. A link refused as gone (Discord's signed links
 * expire after about a day) is looked up again through `freshUrl` and tried once more. `signal`
 * covers every request and body of the download.
 */
export async function downloadAttachment(
  channel: string,
  msg: InboundMessage,
  attachment: InboundAttachment,
  maxBytes: number,
  freshUrl: (source: DiscordFileSource) => Promise<string | undefined>,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const init = signal ? { signal } : {};
  refuseStatedSize(channel, attachment.size, maxBytes);
  const source = sourceOf(channel, attachment);
  try {
    return await fetchBounded(channel, source.url, maxBytes, init);
  } catch (err) {
    if (!(err instanceof ChannelError) || (err.code !== "not_found" && err.code !== "auth_failed")) throw err;
    const url = await freshUrl(source);
    if (!url) {
      throw new ChannelError(channel, "not_found", `attachment "${attachment.name}" of message ${msg.eventId} is gone`, {
        cause: err,
      });
    }
    return fetchBounded(channel, url, maxBytes, init);
  }
}

/** The attachment's current link in a message fetched again; undefined when it is no longer there. */
export function linkIn(message: APIMessage, attachmentId: string): string | undefined {
  return message.attachments.find((a) => a.id === attachmentId)?.url;
}

/** The request of one upload: the file as `files[0]`, described in `payload_json`, pinging no one. */
export function uploadRequest(file: OutboundFile): { files: RawFile[]; body: Record<string, unknown> } {
  const data = Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength);
  return {
    files: [{ name: file.name, data, contentType: file.mime }],
    body: { attachments: [{ id: 0, filename: file.name }], allowed_mentions: { parse: [] } },
  };
}
