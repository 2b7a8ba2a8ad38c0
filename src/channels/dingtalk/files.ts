/**
 * Files both ways. In: a message's `downloadCode` is traded for a temporary URL
 * (`POST /v1.0/robot/messageFiles/download`), which is read with the core's bounded fetch. Out:
 * the bytes go to the older host's media upload (`/media/upload`, multipart field `media`), and
 * the returned media_id is posted as a robot message (`sampleImageMsg` or `sampleFile`).
 */
import { ChannelError, FileTooLargeError } from "../../errors.js";
import { fetchBounded, refuseStatedSize } from "../kit/downloads.js";
import type { ConversationRef, InboundAttachment, OutboundFile } from "../types.js";
import { extensionOf } from "./attachments.js";
import { type MarkdownSenderOptions, sendRobotMessage } from "./markdown-send.js";

/** DingTalk's upload limit for images and files alike: 20 MiB (20 × 1024 × 1024 bytes). */
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;

/** Image formats DingTalk's media upload takes as `type=image`; other images go up as files. */
const UPLOAD_IMAGE_EXTS = new Set(["jpg", "jpeg", "png", "gif", "bmp"]);

/** Reads an attachment's bytes, at most `maxBytes` of them; `signal` covers both requests and the body. */
export async function downloadAttachment(
  opts: MarkdownSenderOptions,
  ref: ConversationRef,
  attachment: InboundAttachment,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  refuseStatedSize(opts.channel, attachment.size, maxBytes);
  const downloadCode = attachment.source.downloadCode;
  if (typeof downloadCode !== "string" || !downloadCode) {
    throw new ChannelError(opts.channel, "not_found", `attachment ${attachment.name} has no downloadCode`);
  }
  const data = await opts.api.call(
    "POST",
    "/v1.0/robot/messageFiles/download",
    { downloadCode, robotCode: opts.robotCode(ref) },
    "robot messageFiles/download",
    signal,
  );
  const url = data.downloadUrl;
  if (typeof url !== "string" || !url) {
    throw new ChannelError(opts.channel, "platform_error", "robot messageFiles/download answered without a downloadUrl");
  }
  // The URL is signed: it needs no token, and sending ours to a storage host would leak it.
  return fetchBounded(opts.channel, url, maxBytes, signal ? { signal } : {});
}

/** Uploads `file` and posts it in the conversation of `ref`; returns the robot send's id. */
export async function sendFile(opts: MarkdownSenderOptions, ref: ConversationRef, file: OutboundFile): Promise<string> {
  if (file.data.byteLength > MAX_UPLOAD_BYTES) {
    throw new FileTooLargeError(opts.channel, MAX_UPLOAD_BYTES, file.data.byteLength);
  }
  const ext = extensionOf(file.name);
  const asImage = file.kind === "image" && UPLOAD_IMAGE_EXTS.has(ext);
  const form = new FormData();
  form.append("media", new Blob([file.data], { type: file.mime }), file.name);
  const uploaded = await opts.api.postForm("/media/upload", { type: asImage ? "image" : "file" }, form, "media/upload");
  const mediaId = uploaded.media_id;
  if (typeof mediaId !== "string" || !mediaId) {
    throw new ChannelError(opts.channel, "platform_error", "media/upload answered without a media_id");
  }
  if (asImage) return sendRobotMessage(opts, ref, "sampleImageMsg", { photoURL: mediaId });
  return sendRobotMessage(opts, ref, "sampleFile", { mediaId, fileName: file.name, fileType: ext || "file" });
}
