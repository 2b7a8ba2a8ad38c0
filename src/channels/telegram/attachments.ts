/**
 * What Telegram says about the files in a message, as Antler's attachments, and the Bot API's
 * file limits. Pure: the downloads and uploads themselves live in files.ts.
 */
import type { InboundAttachment, JsonValue } from "../types.js";

const MiB = 1024 * 1024;
/** getFile refuses larger files ("file is too big"): the most a bot can download. */
export const DOWNLOAD_LIMIT = 20 * MiB;
/** Largest multipart upload of sendDocument (and every method but sendPhoto). */
export const UPLOAD_LIMIT = 50 * MiB;
/** Largest photo sendPhoto takes; a bigger image goes as a document. */
export const PHOTO_LIMIT = 10 * MiB;

/** One size of a photo; Telegram sends several, smallest first. */
export interface TgPhotoSize {
  file_id: string;
  file_unique_id: string;
  width: number;
  height: number;
  file_size?: number;
}

/** The fields shared by documents, voice notes, audio, video and animations. */
export interface TgFile {
  file_id: string;
  file_unique_id: string;
  file_name?: string;
  mime_type?: string;
  file_size?: number;
}

/** The file-carrying fields of a message. */
export interface TgMedia {
  photo?: TgPhotoSize[];
  document?: TgFile;
  voice?: TgFile;
  audio?: TgFile;
  video?: TgFile;
  video_note?: TgFile;
  animation?: TgFile;
}

/** What `download` needs again: the bot's file id (valid for this bot, across restarts). */
export function sourceOf(file: { file_id: string; file_unique_id: string }): { [k: string]: JsonValue } {
  return { file_id: file.file_id, file_unique_id: file.file_unique_id };
}

/**
 * The attachments of one message. Telegram puts at most one file in a message (an album
 * arrives as several messages). Stickers are left out: they are reactions, not content.
 */
export function attachmentsOf(msg: TgMedia): InboundAttachment[] {
  const largest = msg.photo?.length ? largestPhoto(msg.photo) : undefined;
  if (largest) return [withSize({ kind: "image", name: "photo.jpg", mime: "image/jpeg", source: sourceOf(largest) }, largest)];
  if (msg.voice) return [fileAttachment(msg.voice, "audio", "voice", "audio/ogg")];
  if (msg.audio) return [fileAttachment(msg.audio, "audio", "audio")];
  if (msg.document) return [fileAttachment(msg.document, kindOfDocument(msg.document.mime_type), "document")];
  if (msg.video) return [fileAttachment(msg.video, "file", "video", "video/mp4")];
  if (msg.animation) return [fileAttachment(msg.animation, "file", "animation", "video/mp4")];
  if (msg.video_note) return [fileAttachment(msg.video_note, "file", "video_note", "video/mp4")];
  return [];
}

/** The biggest rendition: most pixels, then most bytes. */
function largestPhoto(sizes: TgPhotoSize[]): TgPhotoSize | undefined {
  return [...sizes].sort((a, b) => b.width * b.height - a.width * a.height || (b.file_size ?? 0) - (a.file_size ?? 0))[0];
}

/** A picture sent "as a file" (uncompressed) is still a picture to the agent; so is audio. */
function kindOfDocument(mime: string | undefined): InboundAttachment["kind"] {
  if (mime?.startsWith("image/")) return "image";
  if (mime?.startsWith("audio/")) return "audio";
  return "file";
}

function fileAttachment(file: TgFile, kind: InboundAttachment["kind"], stem: string, defaultMime?: string): InboundAttachment {
  const mime = file.mime_type ?? defaultMime;
  const attachment: InboundAttachment = {
    kind,
    name: file.file_name || `${stem}.${extensionOf(mime)}`,
    source: sourceOf(file),
  };
  if (mime) attachment.mime = mime;
  return withSize(attachment, file);
}

function withSize(attachment: InboundAttachment, file: { file_size?: number }): InboundAttachment {
  if (typeof file.file_size === "number") attachment.size = file.file_size;
  return attachment;
}

const EXTENSIONS: Record<string, string> = {
  "audio/ogg": "ogg",
  "audio/mpeg": "mp3",
  "audio/mp4": "m4a",
  "audio/x-m4a": "m4a",
  "audio/wav": "wav",
  "video/mp4": "mp4",
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/webp": "webp",
  "application/pdf": "pdf",
  "text/plain": "txt",
};

function extensionOf(mime: string | undefined): string {
  return (mime && EXTENSIONS[mime]) ?? "bin";
}
