/**
 * Files in the fake DingTalk: what users send (kept under a downloadCode), the robot file download
 * (`POST /v1.0/robot/messageFiles/download` → a temporary URL this fake serves), the older host's
 * media upload (`POST /media/upload?access_token=…&type=…`, multipart field `media`, errcodes with
 * HTTP 200) and the robot messages that post an uploaded media_id (`sampleImageMsg`, `sampleFile`).
 *
 * The upload limits and formats are DingTalk's documented ones; the errcodes of the upload are the
 * oapi ones (40014 token, 40004 media type, 40005 file type, 40006 file size). The new-style code
 * this fake answers for an unknown downloadCode is a stand-in: DingTalk documents no specific one.
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { DownloadStalls } from "../download-stalls.js";
import type { FakeChat } from "./chat.js";
import { bad, type Reply } from "./openapi.js";

const MB = 1024 * 1024;

/** DingTalk's media upload limits per `type`. */
export const UPLOAD_LIMITS = { image: 20 * MB, file: 20 * MB, video: 20 * MB, voice: 2 * MB } as const;
type UploadType = keyof typeof UPLOAD_LIMITS;

/** Formats the upload takes per `type`; `file` is not checked by extension here. */
const UPLOAD_FORMATS: Partial<Record<UploadType, string[]>> = {
  image: ["jpg", "jpeg", "png", "gif", "bmp"],
  voice: ["amr", "mp3", "wav"],
  video: ["mp4"],
};

/** A file a user sends: a picture (with a caption it goes as rich text), a document, a voice note or a video. */
export interface UserFileSpec {
  kind: "image" | "file" | "audio" | "video";
  name: string;
  mime: string;
  data: Uint8Array;
  /** Text sent with a picture; DingTalk cannot add text to other files. */
  caption?: string;
  /** Audio: DingTalk's transcript of the voice note. */
  recognition?: string;
  /** Audio and video length, ms. */
  durationMs?: number;
}

/**
 * The `msgtype` and `content` of a robot message carrying `file` under `downloadCode`. A caption
 * turns a picture into rich text; in groups its text keeps the space DingTalk leaves after "@robot".
 */
export function fileMessage(file: UserFileSpec, downloadCode: string, group: boolean): Record<string, unknown> {
  const duration = file.durationMs ?? 3000;
  const picture = { downloadCode, pictureDownloadCode: `pic-${downloadCode}` };
  if (file.kind === "image" && file.caption !== undefined) {
    const caption = group ? ` ${file.caption}` : file.caption;
    return { msgtype: "richText", content: { richText: [{ type: "picture", ...picture }, { text: caption }] } };
  }
  if (file.kind === "image") return { msgtype: "picture", content: picture };
  if (file.kind === "audio") {
    return { msgtype: "audio", content: { downloadCode, duration, recognition: file.recognition ?? "" } };
  }
  if (file.kind === "video") return { msgtype: "video", content: { downloadCode, duration, videoType: "mp4" } };
  const fileId = `fid-${randomUUID().slice(0, 8)}`;
  return { msgtype: "file", content: { downloadCode, fileName: file.name, spaceId: "space-1", fileId } };
}

/** A media file uploaded through `/media/upload`. */
export interface FakeMedia {
  mediaId: string;
  type: UploadType;
  name: string;
  mime: string;
  data: Uint8Array;
}

interface StoredFile {
  name: string;
  mime: string;
  data: Uint8Array;
}

const errcode = (code: number, errmsg: string): Reply => ({ status: 200, body: { errcode: code, errmsg } });

export class FakeFiles {
  /** Media uploaded so far, by media_id. */
  readonly media = new Map<string, FakeMedia>();
  /** Paths of every GET of a file URL, to tell whether a download happened. */
  readonly fetched: string[] = [];
  /** Faults of the file URLs: a download that never answers, or whose body stalls after the headers. */
  readonly stalls = new DownloadStalls();
  /** Serve file URLs without Content-Length (chunked), as some storage hosts do. */
  chunked = false;
  private readonly byCode = new Map<string, StoredFile>();
  private readonly links = new Map<string, StoredFile>();

  constructor(
    private readonly chat: FakeChat,
    private readonly robotCode: string,
    private readonly baseUrl: () => string,
  ) {}

  /** Keeps a user's file; returns the downloadCode its message carries. */
  store(file: StoredFile): string {
    const code = `dlc-${randomUUID()}`;
    this.byCode.set(code, { name: file.name, mime: file.mime, data: file.data });
    return code;
  }

  /** `POST /v1.0/robot/messageFiles/download {downloadCode, robotCode}` → `{downloadUrl}`. */
  downloadLink(body: Record<string, unknown>): Reply {
    if (typeof body.downloadCode !== "string" || !body.downloadCode) return bad("InvalidParameter", "downloadCode is required");
    if (body.robotCode !== this.robotCode) return bad("resource.not.found", "robot does not exist");
    const blob = this.byCode.get(body.downloadCode);
    if (!blob) return bad("InvalidParameter.DownloadCode", "downloadCode is invalid or expired");
    return { status: 200, body: { downloadUrl: this.link(blob) } };
  }

  /** GET of a file URL: the bytes, or 404 for a URL this fake never gave out. */
  serve(path: string, res: ServerResponse): void {
    this.fetched.push(path);
    const blob = this.links.get(path);
    if (!blob) {
      res.writeHead(404, { "content-type": "application/xml" });
      res.end("<Error><Code>NoSuchKey</Code></Error>");
      return;
    }
    if (this.stalls.take(res, blob.data, { "content-type": blob.mime || "application/octet-stream" })) return;
    const headers: Record<string, string | number> = { "content-type": blob.mime || "application/octet-stream" };
    if (!this.chunked) headers["content-length"] = blob.data.byteLength;
    res.writeHead(200, headers);
    res.end(Buffer.from(blob.data));
  }

  /** `POST /media/upload?access_token=…&type=…` with multipart field `media`. */
  async upload(query: URLSearchParams, contentType: string, raw: Buffer, tokenOk: (t: string | null) => boolean) {
    if (!tokenOk(query.get("access_token"))) return errcode(40014, "不合法的access_token");
    const type = query.get("type") ?? "";
    if (!(type in UPLOAD_LIMITS)) return errcode(40004, "不合法的媒体文件类型");
    let media: ReturnType<FormData["get"]> = null;
    try {
      media = (await new Response(raw, { headers: { "content-type": contentType } }).formData()).get("media");
    } catch {
      return errcode(40035, "缺少参数 media");
    }
    if (!media || typeof media === "string") return errcode(40035, "缺少参数 media");
    const ext = media.name.includes(".") ? (media.name.split(".").pop() ?? "").toLowerCase() : "";
    const formats = UPLOAD_FORMATS[type as UploadType];
    if (formats && !formats.includes(ext)) return errcode(40005, "不合法的文件类型");
    if (media.size === 0 || media.size > UPLOAD_LIMITS[type as UploadType]) return errcode(40006, "不合法的文件大小");
    const mediaId = `@lA${randomUUID().replaceAll("-", "")}`;
    const data = new Uint8Array(await media.arrayBuffer());
    this.media.set(mediaId, { mediaId, type: type as UploadType, name: media.name, mime: media.type, data });
    return { status: 200, body: { errcode: 0, errmsg: "ok", type, media_id: mediaId, created_at: Date.now() } };
  }

  /** A robot message that posts an uploaded file; undefined when `msgKey` is not a file message. */
  post(conversationId: string, msgKey: string, param: Record<string, unknown>): Reply | undefined {
    if (msgKey === "sampleImageMsg") {
      const media = this.media.get(String(param.photoURL ?? ""));
      if (media?.type !== "image") return bad("InvalidParameter", "photoURL is not an uploaded image");
      this.record(conversationId, "image", media.name, media);
      return undefined;
    }
    const media = this.media.get(String(param.mediaId ?? ""));
    if (!media) return bad("InvalidParameter", "mediaId does not exist");
    if (typeof param.fileName !== "string" || !param.fileName || typeof param.fileType !== "string" || !param.fileType) {
      return bad("InvalidParameter", "fileName and fileType are required");
    }
    this.record(conversationId, "file", param.fileName, media);
    return undefined;
  }

  private record(conversationId: string, kind: "image" | "file", name: string, media: FakeMedia): void {
    const blob = { name, mime: media.mime, data: media.data };
    this.chat.postFile({ conversationId, kind, name, mediaId: media.mediaId, data: media.data, url: this.link(blob) });
  }

  private link(blob: StoredFile): string {
    const path = `/files/${randomUUID()}`;
    this.links.set(path, blob);
    return `${this.baseUrl()}${path}`;
  }
}
