/**
 * Attachments of DingTalk robot messages: pictures, files, voice notes, videos and the pictures
 * inside rich text become `InboundAttachment`s whose `source` carries the `downloadCode` that
 * `download` trades for a URL. DingTalk states no size and no MIME type for any of them (a video's
 * `videoType` aside), so none is claimed: the core reads the type off the name or the bytes.
 * Pictures and voice notes come without a name and get made-up ones (`photo.jpg`, `voice.amr`).
 */
import type { InboundAttachment, JsonValue } from "../types.js";

/** One part of a rich-text message: a run of text, or a picture. */
export interface RichTextPart {
  text?: string;
  type?: string;
  downloadCode?: string;
  pictureDownloadCode?: string;
}

/** `content` of a robot message, for the types that carry one. */
export interface RobotContent {
  richText?: RichTextPart[];
  downloadCode?: string;
  pictureDownloadCode?: string;
  fileName?: string;
  fileId?: string;
  spaceId?: string;
  /** Audio and video length as DingTalk gives it. */
  duration?: number | string;
  /** DingTalk's own transcript of a voice note. */
  recognition?: string;
  videoType?: string;
}

/** What `download` reads from `attachment.source`. */
export interface DingTalkSource {
  /** The message type the attachment came in: picture, richText, file, audio or video. */
  msgtype: string;
  /** Traded for a temporary URL by `POST /v1.0/robot/messageFiles/download`. */
  downloadCode: string;
  /** Audio only: DingTalk's transcript, when it made one. */
  recognition?: string;
  /** Audio and video: the length DingTalk states. */
  duration?: number | string;
}

/** Extensions whose files are voice or music: sent as a file, still read as audio. */
const AUDIO_EXTS = new Set(["mp3", "wav", "amr", "m4a", "ogg", "aac", "opus", "flac"]);

/** The extension of `name`, lower case, without the dot ("" when there is none). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

function attachment(kind: InboundAttachment["kind"], name: string, source: DingTalkSource, mime?: string): InboundAttachment {
  return { kind, name, ...(mime ? { mime } : {}), source: source as unknown as { [k: string]: JsonValue } };
}

function pictures(parts: RichTextPart[]): InboundAttachment[] {
  const codes = parts.filter((p) => p.type === "picture" && isText(p.downloadCode)).map((p) => p.downloadCode as string);
  return codes.map((downloadCode, i) =>
    attachment("image", i === 0 ? "photo.jpg" : `photo-${i + 1}.jpg`, { msgtype: "richText", downloadCode }),
  );
}

/**
 * The attachments of a robot message of type `msgtype`. A part without a `downloadCode` cannot be
 * downloaded and is left out.
 */
export function attachmentsOf(msgtype: string, content: RobotContent | undefined): InboundAttachment[] {
  if (!content) return [];
  if (msgtype === "richText") return pictures(content.richText ?? []);
  const downloadCode = content.downloadCode;
  if (!isText(downloadCode)) return [];
  const length = content.duration;
  const duration = typeof length === "number" || isText(length) ? { duration: length } : {};
  if (msgtype === "picture") return [attachment("image", "photo.jpg", { msgtype, downloadCode })];
  if (msgtype === "audio") {
    const recognition = isText(content.recognition) ? { recognition: content.recognition } : {};
    return [attachment("audio", "voice.amr", { msgtype, downloadCode, ...duration, ...recognition })];
  }
  if (msgtype === "video") {
    const type = isText(content.videoType) ? content.videoType.toLowerCase() : "mp4";
    return [attachment("file", `video.${type}`, { msgtype, downloadCode, ...duration }, `video/${type}`)];
  }
  if (msgtype === "file") {
    const name = isText(content.fileName) ? content.fileName : "file";
    const kind = AUDIO_EXTS.has(extensionOf(name)) ? "audio" : "file";
    return [attachment(kind, name, { msgtype, downloadCode })];
  }
  return [];
}

/** A non-empty string: what a wire field must be to be used. */
function isText(value: unknown): value is string {
  return typeof value === "string" && value !== "";
}
