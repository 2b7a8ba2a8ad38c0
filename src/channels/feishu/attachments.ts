/**
 * The files a Feishu message carries, as {@link InboundAttachment}s. Events name a resource by
 * key only (`image_key`, `file_key`), never by size or MIME type, so the MIME type is read off
 * the file name's extension where there is one, and `size` stays unknown until the download.
 */

import { mimeFromName } from "../kit/downloads.js";
import type { InboundAttachment } from "../types.js";

/** What `download` needs: the message holding the resource, its key, and the resource API's `type`. */
export interface FeishuFileSource {
  message_id: string;
  file_key: string;
  type: "image" | "file";
}

type Content = Record<string, unknown>;

/** Attachments of one message; `content` is the event's parsed `message.content`. */
export function messageAttachments(messageId: string, type: string | undefined, content: unknown): InboundAttachment[] {
  if (!content || typeof content !== "object") return [];
  const c = content as Content;
  switch (type) {
    case "image":
      return keyed(c.image_key, (key) => image(messageId, key, 1));
    case "file":
      return keyed(c.file_key, (key) => named(messageId, key, str(c.file_name) ?? "file"));
    case "audio":
      // Voice notes are Opus in an Ogg container; no name comes with them.
      return keyed(c.file_key, (key) => ({
        kind: "audio",
        name: "voice.ogg",
        mime: "audio/ogg",
        source: source(messageId, key, "file"),
      }));
    case "media":
      // A video (with a cover image_key): read as a file, through the resource API's `file` type.
      return keyed(c.file_key, (key) => ({ ...named(messageId, key, str(c.file_name) ?? "video.mp4"), kind: "file" }));
    case "post":
      return postAttachments(messageId, c);
    default:
      return [];
  }
}

/** `img` and `media` elements of a rich-text post, in reading order. */
function postAttachments(messageId: string, parsed: Content): InboundAttachment[] {
  const out: InboundAttachment[] = [];
  let images = 0;
  for (const el of postElements(parsed)) {
    if (el.tag === "img" && str(el.image_key)) out.push(image(messageId, el.image_key as string, ++images));
    if (el.tag === "media" && str(el.file_key)) {
      out.push({ ...named(messageId, el.file_key as string, str(el.file_name) ?? "video.mp4"), kind: "file" });
    }
  }
  return out;
}

/** Elements of a post, which may sit under a locale key (`zh_cn`, `en_us`). */
function postElements(parsed: Content): Content[] {
  let body: Content | undefined = parsed;
  if (!Array.isArray(body.content)) {
    body = Object.values(parsed).find((v): v is Content => !!v && typeof v === "object" && Array.isArray((v as Content).content));
  }
  const paragraphs = Array.isArray(body?.content) ? (body.content as unknown[]) : [];
  return paragraphs.flatMap((p) => (Array.isArray(p) ? p.filter((e): e is Content => !!e && typeof e === "object") : []));
}

/** An image has no name on Feishu, and its format is only known from the bytes. */
function image(messageId: string, key: string, n: number): InboundAttachment {
  return { kind: "image", name: n > 1 ? `photo-${n}.jpg` : "photo.jpg", source: source(messageId, key, "image") };
}

/** A file sent under its name; audio files (by extension) are `audio`, the rest `file`. */
function named(messageId: string, key: string, name: string): InboundAttachment {
  const mime = mimeFromName(name);
  const kind = mime?.startsWith("audio/") ? "audio" : "file";
  const att: InboundAttachment = { kind, name, source: source(messageId, key, "file") };
  if (mime) att.mime = mime;
  return att;
}

function source(messageId: string, key: string, type: FeishuFileSource["type"]): InboundAttachment["source"] {
  const s: FeishuFileSource = { message_id: messageId, file_key: key, type };
  return { ...s };
}

function keyed(key: unknown, make: (key: string) => InboundAttachment): InboundAttachment[] {
  const k = str(key);
  return k ? [make(k)] : [];
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** Reads a stored `source` back; undefined when it is not one this adapter made. */
export function readSource(raw: unknown): FeishuFileSource | undefined {
  const s = raw as Partial<FeishuFileSource> | null;
  if (!s || typeof s !== "object") return undefined;
  if (typeof s.message_id !== "string" || typeof s.file_key !== "string") return undefined;
  if (s.type !== "image" && s.type !== "file") return undefined;
  return { message_id: s.message_id, file_key: s.file_key, type: s.type };
}
