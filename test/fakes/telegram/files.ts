/**
 * Files in the fake Telegram: what users and the bot uploaded, under opaque file ids and the
 * `file_path` getFile hands out, with the Bot API's limits (20 MB to download, 10 MB per photo,
 * 50 MB per upload) and its error texts.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";

const MiB = 1024 * 1024;
export const DOWNLOAD_LIMIT = 20 * MiB;
export const PHOTO_LIMIT = 10 * MiB;
export const UPLOAD_LIMIT = 50 * MiB;
/** Room for the multipart framing around a file at the upload limit. */
const BODY_SLACK = MiB;

export type MediaKind = "photo" | "document" | "voice" | "audio";

export interface StoredFile {
  file_id: string;
  file_unique_id: string;
  /** What getFile returns; the download URL is `/file/bot<token>/<file_path>`. */
  file_path: string;
  data: Uint8Array;
  /** The name it was sent with (documents and audio keep it; photos and voice notes have none). */
  name?: string;
  mime?: string;
  /** The name it was uploaded under, also where the API shows none. */
  uploadedAs?: string;
}

/** The file a message carries. A photo also has a smaller rendition, as Telegram makes. */
export interface MessageMedia {
  kind: MediaKind;
  file: StoredFile;
  thumb?: StoredFile;
  /** Seconds, for voice and audio. */
  duration?: number;
}

/** A file part of a multipart request, as the fake read it. */
export interface UploadedFile {
  filename: string;
  data: Uint8Array;
}

export class UploadTooLarge extends Error {}

const FOLDERS: Record<MediaKind, string> = { photo: "photos", document: "documents", voice: "voice", audio: "music" };
const MIME_BY_EXT: Record<string, string> = {
  pdf: "application/pdf",
  txt: "text/plain",
  csv: "text/csv",
  json: "application/json",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  zip: "application/zip",
};

export class FileStore {
  private next = 1;
  private readonly byId = new Map<string, StoredFile>();
  private readonly byPath = new Map<string, StoredFile>();

  /** Keeps `data` under a new file id, in the folder Telegram uses for `kind`. */
  put(kind: MediaKind, data: Uint8Array, options: { name?: string; mime?: string } = {}): StoredFile {
    const n = this.next++;
    const ext = kind === "photo" ? "jpg" : kind === "voice" ? "oga" : (extension(options.name) ?? "bin");
    const file: StoredFile = {
      file_id: `${kind.slice(0, 2).toUpperCase()}AC${n}${randomBytes(12).toString("base64url")}`,
      file_unique_id: `AQAD${n}`,
      file_path: `${FOLDERS[kind]}/file_${n}.${ext}`,
      data: new Uint8Array(data),
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(options.mime !== undefined ? { mime: options.mime } : {}),
    };
    this.byId.set(file.file_id, file);
    this.byPath.set(file.file_path, file);
    return file;
  }

  /**
   * A message's media. Photos get a smaller rendition (the first half of the bytes) too; like
   * Telegram, photos and voice notes keep no file name in the API (`uploadedAs` remembers it).
   */
  media(kind: MediaKind, data: Uint8Array, options: { name?: string; mime?: string; duration?: number } = {}): MessageMedia {
    const mime = kind === "photo" ? undefined : kind === "voice" ? "audio/ogg" : (options.mime ?? mimeOf(options.name));
    const named = kind === "document" || kind === "audio" ? options.name : undefined;
    const file = this.put(kind, data, { ...(named !== undefined ? { name: named } : {}), ...(mime ? { mime } : {}) });
    if (options.name !== undefined) file.uploadedAs = options.name;
    const media: MessageMedia = { kind, file };
    if (kind === "photo") media.thumb = this.put("photo", data.subarray(0, Math.ceil(data.byteLength / 2)));
    if (kind === "voice" || kind === "audio") media.duration = options.duration ?? 1;
    return media;
  }

  get(fileId: string): StoredFile | undefined {
    return this.byId.get(fileId);
  }

  atPath(path: string): StoredFile | undefined {
    return this.byPath.get(path);
  }
}

/** The `photo`, `document`, `voice` or `audio` field of a message in the Bot API's JSON. */
export function mediaToApi(media: MessageMedia): Record<string, unknown> {
  const { file } = media;
  const base = { file_id: file.file_id, file_unique_id: file.file_unique_id, file_size: file.data.byteLength };
  if (media.kind === "photo") {
    const sizes = media.thumb ? [{ ...ids(media.thumb), width: 90, height: 68 }] : [];
    return { photo: [...sizes, { ...base, width: 1280, height: 960 }] };
  }
  const described = {
    ...base,
    ...(file.name !== undefined && media.kind !== "voice" ? { file_name: file.name } : {}),
    ...(file.mime !== undefined ? { mime_type: file.mime } : {}),
    ...(media.duration !== undefined ? { duration: media.duration } : {}),
  };
  return { [media.kind]: described };
}

function ids(file: StoredFile) {
  return { file_id: file.file_id, file_unique_id: file.file_unique_id, file_size: file.data.byteLength };
}

/** The MIME type Telegram derives from a file name's extension. */
export function mimeOf(name: string | undefined): string {
  return MIME_BY_EXT[extension(name) ?? ""] ?? "application/octet-stream";
}

function extension(name: string | undefined): string | undefined {
  const m = /\.([A-Za-z0-9]+)$/.exec(name ?? "");
  return m?.[1]?.toLowerCase();
}

/** The picture formats sendPhoto can process, by their first bytes. */
export function looksLikeImage(data: Uint8Array): boolean {
  const head = Buffer.from(data.subarray(0, 12));
  return (
    (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) ||
    head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) ||
    (head.toString("latin1", 0, 4) === "RIFF" && head.toString("latin1", 8, 12) === "WEBP") ||
    head.toString("latin1", 0, 4) === "GIF8"
  );
}

/**
 * A multipart/form-data body as params: text parts as strings, file parts as
 * {@link UploadedFile}. Past the upload limit it reads on without keeping anything (so the
 * client gets the answer rather than a reset) and throws {@link UploadTooLarge}.
 */
export async function readMultipart(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of req) {
    total += (c as Buffer).byteLength;
    if (total <= UPLOAD_LIMIT + BODY_SLACK) chunks.push(c as Buffer);
  }
  if (total > UPLOAD_LIMIT + BODY_SLACK) throw new UploadTooLarge();
  const form = await new Response(Buffer.concat(chunks), {
    headers: { "content-type": String(req.headers["content-type"]) },
  }).formData();
  const params: Record<string, unknown> = {};
  for (const [key, value] of form.entries()) {
    if (typeof value === "string") params[key] = value;
    else params[key] = { filename: value.name, data: new Uint8Array(await value.arrayBuffer()) } satisfies UploadedFile;
  }
  return params;
}

export function isUpload(value: unknown): value is UploadedFile {
  return typeof value === "object" && value !== null && (value as UploadedFile).data instanceof Uint8Array;
}
