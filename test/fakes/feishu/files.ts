/**
 * The fake's file endpoints: image and file uploads (multipart, with Feishu's 10 MB and 30 MB
 * limits, refusing empty files and unknown formats) and the message-resource download, which
 * serves only keys that the given message holds, with the `type` that fits them.
 */
import type { FakeMessage } from "./model.js";
import type { Part } from "./multipart.js";
import { ok, type Reply } from "./openapi-ops.js";
import { type FakeFile, type FeishuWorld, LIMITS } from "./state.js";

const FILE_TYPES = new Set(["opus", "mp4", "pdf", "doc", "xls", "ppt", "stream"]);

const fail = (code: number, msg: string, status = 400): Reply => ({ status, body: { code, msg } });

/** `POST /open-apis/im/v1/images`: fields `image_type` and `image`. */
export function uploadImage(world: FeishuWorld, parts: Part[] | undefined): Reply {
  if (!parts) return fail(234001, "Invalid request param: the body must be multipart/form-data");
  const imageType = field(parts, "image_type");
  const image = parts.find((p) => p.name === "image");
  if (imageType !== "message" && imageType !== "avatar") return fail(234001, "Invalid request param: image_type");
  if (!image) return fail(234001, "Invalid request param: image is required");
  if (image.data.length === 0) return fail(234010, "File's size can't be 0.");
  if (image.data.length > LIMITS.imageBytes) return fail(234006, "The file size exceed the max value.");
  if (!imageFormat(image.data)) return fail(234011, "Can't recognize image format.");
  const file = store(world, { kind: "image", data: image.data, by: "bot" });
  return ok({ image_key: file.key });
}

/** `POST /open-apis/im/v1/files`: fields `file_type`, `file_name`, `file` (and `duration`). */
export function uploadFile(world: FeishuWorld, parts: Part[] | undefined): Reply {
  if (!parts) return fail(234001, "Invalid request param: the body must be multipart/form-data");
  const fileType = field(parts, "file_type");
  const name = field(parts, "file_name");
  const upload = parts.find((p) => p.name === "file");
  if (!fileType || !FILE_TYPES.has(fileType)) return fail(234001, "Invalid request param: file_type");
  if (!name) return fail(234001, "Invalid request param: file_name is required");
  if (!upload) return fail(234001, "Invalid request param: file is required");
  if (upload.data.length === 0) return fail(234010, "File's size can't be 0.");
  if (upload.data.length > LIMITS.fileBytes) return fail(234006, "The file size exceed the max value.");
  const file = store(world, { kind: "file", data: upload.data, name, fileType, by: "bot" });
  return ok({ file_key: file.key });
}

/** `GET /open-apis/im/v1/messages/:message_id/resources/:file_key?type=image|file`. */
export function getResource(world: FeishuWorld, messageId: string, key: string, type: string | null): Reply {
  if (type !== "image" && type !== "file") return fail(234001, "Invalid request param: type must be image or file");
  const message = world.message(messageId);
  const file = world.files.get(key);
  if (!message || !file || !resourceKeys(message).includes(key)) return fail(234003, "File not in msg.");
  if (file.kind !== type) return fail(234001, `Invalid request param: ${key} is not of type ${type}`);
  if (file.data.length > LIMITS.resourceBytes) return fail(234037, "Downloaded file size exceeds limit.");
  const contentType = file.mime ?? imageFormat(file.data) ?? "application/octet-stream";
  return { status: 200, body: undefined, raw: { data: file.data, contentType, chunked: world.chunkedDownloads } };
}

/** Stores bytes under a new key (`img_v3_…` or `file_v3_…`). */
export function store(world: FeishuWorld, file: Omit<FakeFile, "key">): FakeFile {
  const stored: FakeFile = { ...file, key: world.id(file.kind === "image" ? "img_v3_" : "file_v3_") };
  world.files.set(stored.key, stored);
  return stored;
}

/** Every image_key and file_key a message's content names (posts included). */
export function resourceKeys(message: FakeMessage): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message.content);
  } catch {
    return [];
  }
  const keys: string[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) visit(x);
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if ((k === "image_key" || k === "file_key") && typeof x === "string") keys.push(x);
        else visit(x);
      }
    }
  };
  visit(parsed);
  return keys;
}

/** The image MIME type the bytes start with, for the formats Feishu reads. */
export function imageFormat(data: Buffer): string | undefined {
  const hex = data.subarray(0, 12).toString("hex");
  if (hex.startsWith("ffd8ff")) return "image/jpeg";
  if (hex.startsWith("89504e470d0a1a0a")) return "image/png";
  if (hex.startsWith("47494638")) return "image/gif";
  if (hex.startsWith("52494646") && data.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  if (hex.startsWith("424d")) return "image/bmp";
  if (hex.startsWith("49492a00") || hex.startsWith("4d4d002a")) return "image/tiff";
  if (hex.startsWith("00000100")) return "image/x-icon";
  if (data.subarray(4, 12).toString("latin1").startsWith("ftyphei")) return "image/heic";
  return undefined;
}

function field(parts: Part[], name: string): string | undefined {
  const part = parts.find((p) => p.name === name);
  return part ? part.data.toString("utf8") : undefined;
}
