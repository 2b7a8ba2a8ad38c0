/**
 * Files in and out of Feishu. Downloads go through the message-resource API (`GET
 * /im/v1/messages/:id/resources/:key?type=image|file`), read as a stream and cut off at the
 * caller's limit. Uploads go to `/im/v1/images` (10 MiB) or `/im/v1/files` (30 MiB) and the key
 * is then posted as an `image` or `file` message where the adapter's replies go.
 */
import type { Readable } from "node:stream";
import { ChannelError, FileTooLargeError } from "../../errors.js";
import { readBounded, refuseStatedSize } from "../kit/downloads.js";
import type { ConversationRef, InboundAttachment, MessageHandle, OutboundFile } from "../types.js";
import type { FeishuApi } from "./api.js";
import { readSource } from "./attachments.js";
import { mapFeishuError } from "./map-error.js";
import { settledRef } from "./targets.js";

/** `/im/v1/files` refuses more than 30 MiB; it is the largest upload there is. */
export const MAX_UPLOAD_BYTES = 30 * 1024 * 1024;
/** `/im/v1/images` refuses more than 10 MiB; larger images go up as files. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** Image formats `/im/v1/images` takes; other images (SVG, …) go up as files. */
const IMAGE_MIMES = new Set([
  "image/jpeg",
  "image/png",
  "image/webp",
  "image/gif",
  "image/bmp",
  "image/x-icon",
  "image/vnd.microsoft.icon",
  "image/tiff",
  "image/heic",
]);

type FileType = "pdf" | "doc" | "xls" | "ppt" | "stream";

/**
 * Reads one attachment, at most `maxBytes` of it. `signal` covers the request and the whole body:
 * the SDK's `messageResource.get` takes none, so the same GET goes through the client's generic
 * `request` (the same token, path and stream), which hands it to axios.
 */
export async function downloadAttachment(
  api: FeishuApi,
  channel: string,
  attachment: InboundAttachment,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const src = readSource(attachment.source);
  if (!src)
    throw new ChannelError(channel, "not_supported", `attachment "${attachment.name}" has no Feishu resource to download`);
  refuseStatedSize(channel, attachment.size, maxBytes);
  const path = `open-apis/im/v1/messages/${encodeURIComponent(src.message_id)}/resources/${encodeURIComponent(src.file_key)}`;
  const request = {
    method: "GET",
    url: path,
    params: { type: src.type },
    responseType: "stream" as const,
    $return_headers: true,
  };
  const res = await api.call(
    "download file",
    () =>
      api.client
        .request<{ data: Readable; headers?: Record<string, unknown> }>({ ...request, ...(signal ? { signal } : {}) })
        .catch(async (err: unknown) => {
          throw await withReadableBody(err);
        }),
    signal,
  );
  const stream = res.data;
  const stop = () => stream.destroy(signal?.reason);
  signal?.addEventListener("abort", stop, { once: true });
  const declared = Number(res.headers?.["content-length"]);
  try {
    if (Number.isFinite(declared) && declared > maxBytes) throw new FileTooLargeError(channel, maxBytes, declared);
    return await readBounded(channel, stream, maxBytes);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw mapFeishuError(channel, err, "download file");
  } finally {
    signal?.removeEventListener("abort", stop);
    stream.destroy();
  }
}

/** Uploads `file` and posts it into the conversation of `ref`. */
export async function postFile(
  api: FeishuApi,
  channel: string,
  ref: ConversationRef,
  file: OutboundFile,
  uuid?: string,
): Promise<MessageHandle> {
  const size = file.data.byteLength;
  if (size === 0) throw new ChannelError(channel, "content_rejected", `"${file.name}" is empty, and Feishu refuses empty files`);
  if (size > MAX_UPLOAD_BYTES) throw new FileTooLargeError(channel, MAX_UPLOAD_BYTES, size);
  const data = Buffer.from(file.data.buffer, file.data.byteOffset, size);
  if (file.kind === "image" && size <= MAX_IMAGE_BYTES && IMAGE_MIMES.has(file.mime.toLowerCase())) {
    const res = await api.call("upload image", () =>
      api.client.im.v1.image.create({ data: { image_type: "message", image: data } }).catch(async (err: unknown) => {
        throw await withReadableBody(err);
      }),
    );
    const key = res?.image_key;
    if (!key) throw mapFeishuError(channel, new Error("the answer carried no image_key"), "upload image");
    const posted = await api.postMessage(ref, "image", JSON.stringify({ image_key: key }), uuid);
    return { id: posted.id, ref: settledRef(ref, posted), extra: { kind: "image" } };
  }
  const res = await api.call("upload file", () =>
    api.client.im.v1.file
      .create({ data: { file_type: fileType(file), file_name: file.name, file: data } })
      .catch(async (err: unknown) => {
        throw await withReadableBody(err);
      }),
  );
  const key = res?.file_key;
  if (!key) throw mapFeishuError(channel, new Error("the answer carried no file_key"), "upload file");
  const posted = await api.postMessage(ref, "file", JSON.stringify({ file_key: key }), uuid);
  return { id: posted.id, ref: settledRef(ref, posted), extra: { kind: "file" } };
}

/**
 * The upload's `file_type`. `opus` and `mp4` are left out on purpose: those keys are meant for
 * `audio` and `media` messages (a video needs a cover image), so such files go up as `stream`.
 */
function fileType(file: OutboundFile): FileType {
  const ext = /\.([A-Za-z0-9]+)$/.exec(file.name)?.[1]?.toLowerCase() ?? "";
  const mime = file.mime.toLowerCase();
  if (ext === "pdf" || mime === "application/pdf") return "pdf";
  if (ext === "doc" || ext === "docx" || mime.includes("wordprocessingml") || mime === "application/msword") return "doc";
  if (ext === "xls" || ext === "xlsx" || mime.includes("spreadsheetml") || mime === "application/vnd.ms-excel") return "xls";
  if (ext === "ppt" || ext === "pptx" || mime.includes("presentationml") || mime === "application/vnd.ms-powerpoint") {
    return "ppt";
  }
  return "stream";
}

/**
 * A refused stream or multipart call leaves the error body unread (a stream) in the axios
 * error; read its first KB as JSON so the mapper sees the platform's `code`.
 */
async function withReadableBody(err: unknown): Promise<unknown> {
  const response = (err as { response?: { data?: unknown } } | null)?.response;
  const data = response?.data as Readable | undefined;
  if (!response || !data || typeof data !== "object" || typeof data.on !== "function") return err;
  try {
    const bytes = await readBounded("", data, 64 * 1024);
    response.data = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    response.data = undefined;
  } finally {
    data.destroy();
  }
  return err;
}
