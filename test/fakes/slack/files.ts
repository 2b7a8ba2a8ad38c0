/**
 * Files in the fake Slack: the upload v2 methods (`files.getUploadURLExternal`, the upload URL,
 * `files.completeUploadExternal`), `files.info`, and `url_private(_download)` on the fake's own
 * host, which serves bytes only with the bot token (else Slack's HTML sign-in page, status 200).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { DownloadStalls } from "../download-stalls.js";
import { type Json, SlackApiError } from "./web-api.js";

/** Slack's limit for one file: "1 GB", read here as 10^9 bytes. */
export const SLACK_FILE_MAX_BYTES = 1_000_000_000;

export interface FakeFile {
  id: string;
  name: string;
  title: string;
  mimetype: string;
  filetype: string;
  /** `slack_audio` for a voice clip. */
  subtype?: string;
  data: Uint8Array;
  user: string;
  byBot: boolean;
  created: number;
  /** Where it was shared; a completed upload without a channel stays private. */
  channel?: string;
  threadTs?: string;
}

interface PendingUpload {
  id: string;
  filename: string;
  length: number;
  data?: Uint8Array;
}

const MIME_BY_EXT: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
  txt: "text/plain",
  csv: "text/csv",
  json: "application/json",
  md: "text/markdown",
  webm: "audio/webm",
  ogg: "audio/ogg",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
};

export function extensionOf(name: string): string {
  const m = /\.([A-Za-z0-9]{1,10})$/.exec(name);
  return m?.[1]?.toLowerCase() ?? "binary";
}

/** Slack guesses an uploaded file's type from its name. */
export function mimeFromName(name: string): string {
  return MIME_BY_EXT[extensionOf(name)] ?? "application/octet-stream";
}

const LOGIN_PAGE = "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to your workspace</body></html>";

export class FakeFiles {
  readonly files: FakeFile[] = [];
  /** Every GET of a file URL, with whether it carried the bot token. */
  readonly downloads: Array<{ id: string; authorized: boolean; at: number }> = [];
  /** Faults of the file URLs: a download that never answers, or whose body stalls after the headers. */
  readonly stalls = new DownloadStalls();
  /** Stream file bodies without a Content-Length (Slack's CDN may), so only the bytes read tell the size. */
  omitContentLength = false;
  private readonly pending = new Map<string, PendingUpload>();
  private counter = 0;

  constructor(
    private readonly o: {
      teamId: string;
      botUserId: string;
      botToken: string;
      baseUrl: () => string;
      /** Throws Slack's error when the bot may not share into `channel` (workspace.ts). */
      postable?: (channel: string) => void;
    },
  ) {}

  /** Web API methods, registered on the fake's FakeWebApi. */
  handlers(): Record<string, (args: Json) => Json> {
    return {
      "files.getUploadURLExternal": (a) => this.getUploadUrl(a),
      "files.completeUploadExternal": (a) => this.complete(a),
      "files.info": (a) => ({ file: this.describe(this.byId(a.file)) }),
    };
  }

  /** A file a user shares (before its message event is sent). */
  addUserFile(
    upload: { name: string; mime: string; data: Uint8Array; voice?: boolean },
    user: string,
    channel: string,
  ): FakeFile {
    const file: FakeFile = {
      id: this.nextId(),
      name: upload.name,
      title: upload.name,
      mimetype: upload.mime,
      filetype: extensionOf(upload.name),
      ...(upload.voice ? { subtype: "slack_audio" } : {}),
      data: upload.data,
      user,
      byBot: false,
      created: Math.floor(Date.now() / 1000),
      channel,
    };
    this.files.push(file);
    return file;
  }

  /** The file object as Slack shows it in events and files.info. */
  describe(f: FakeFile): Json {
    const base = `${this.o.baseUrl()}/files-pri/${this.o.teamId}-${f.id}`;
    const name = encodeURIComponent(f.name);
    return {
      id: f.id,
      created: f.created,
      timestamp: f.created,
      name: f.name,
      title: f.title,
      mimetype: f.mimetype,
      filetype: f.filetype,
      ...(f.subtype ? { subtype: f.subtype } : {}),
      user: f.user,
      size: f.data.byteLength,
      mode: "hosted",
      is_external: false,
      is_public: false,
      url_private: `${base}/${name}`,
      url_private_download: `${base}/download/${name}`,
    };
  }

  /** `GET /files-pri/<team>-<id>/[download/]<name>`. */
  serveFile(req: IncomingMessage, res: ServerResponse, path: string): void {
    const m = /^\/files-pri\/([A-Z0-9]+)-([A-Z0-9]+)\/(?:download\/)?[^/]+$/.exec(path);
    const file = m && m[1] === this.o.teamId ? this.files.find((f) => f.id === m[2]) : undefined;
    if (req.method !== "GET" || !file) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const authorized = req.headers.authorization === `Bearer ${this.o.botToken}`;
    this.downloads.push({ id: file.id, authorized, at: Date.now() });
    if (!authorized) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(LOGIN_PAGE);
      return;
    }
    if (this.stalls.take(res, file.data, { "content-type": file.mimetype })) return;
    const headers: Record<string, string> = { "content-type": file.mimetype };
    if (!this.omitContentLength) headers["content-length"] = String(file.data.byteLength);
    res.writeHead(200, headers);
    // In pieces, so a reader that stops early really stops mid-body.
    const step = 16 * 1024;
    for (let at = 0; at < file.data.byteLength; at += step) res.write(file.data.subarray(at, at + step));
    res.end();
  }

  /** `POST /upload/v1/<file id>`: the bytes, raw or as a multipart form (the web client sends field `body`). */
  async receiveUpload(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const upload = this.pending.get(/^\/upload\/v1\/([A-Z0-9]+)$/.exec(path)?.[1] ?? "");
    if (req.method !== "POST" || !upload) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    // Room for multipart framing; past that the body is cut off, as a proxy would.
    const raw = await readUpTo(req, upload.length + 64 * 1024);
    if (!raw) {
      res.writeHead(413, { "content-type": "text/plain" }).end("payload too large");
      return;
    }
    const data = await bytesOf(raw, String(req.headers["content-type"] ?? ""));
    if (data === undefined || data.byteLength !== upload.length) {
      res.writeHead(data && data.byteLength > upload.length ? 413 : 400, { "content-type": "text/plain" }).end("bad upload");
      return;
    }
    upload.data = data;
    res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${data.byteLength}`);
  }

  /** Files the bot shared in `channel` (optionally one thread), oldest first. */
  sharedByBot(channel?: string, threadTs?: string): FakeFile[] {
    return this.files.filter(
      (f) => f.byBot && f.channel !== undefined && (!channel || f.channel === channel) && (!threadTs || f.threadTs === threadTs),
    );
  }

  private getUploadUrl(a: Json): Json {
    const filename = typeof a.filename === "string" ? a.filename.trim() : "";
    const length = Number(a.length);
    if (!filename || !Number.isInteger(length) || length < 1) throw new SlackApiError("invalid_arguments");
    if (length > SLACK_FILE_MAX_BYTES) throw new SlackApiError("file_upload_size_restricted");
    const id = this.nextId();
    this.pending.set(id, { id, filename, length });
    return { upload_url: `${this.o.baseUrl()}/upload/v1/${id}`, file_id: id };
  }

  private complete(a: Json): Json {
    const entries = a.files;
    if (!Array.isArray(entries) || entries.length === 0) throw new SlackApiError("invalid_arguments");
    const channel = typeof a.channel_id === "string" && a.channel_id ? a.channel_id : undefined;
    const threadTs = typeof a.thread_ts === "string" && a.thread_ts ? a.thread_ts : undefined;
    if (threadTs && !channel) throw new SlackApiError("invalid_arguments");
    if (channel) this.o.postable?.(channel);
    const uploads = (entries as Json[]).map((e) => this.pending.get(String(e.id)));
    // An unknown id, or one whose bytes never arrived: Slack has discarded it.
    if (uploads.some((u) => !u?.data)) throw new SlackApiError("file_not_found");
    return {
      files: (entries as Json[]).map((e, i) => {
        const u = uploads[i] as PendingUpload & { data: Uint8Array };
        this.pending.delete(u.id);
        const title = typeof e.title === "string" && e.title ? e.title : u.filename;
        this.files.push({
          id: u.id,
          name: u.filename,
          title,
          mimetype: mimeFromName(u.filename),
          filetype: extensionOf(u.filename),
          data: u.data,
          user: this.o.botUserId,
          byBot: true,
          created: Math.floor(Date.now() / 1000),
          ...(channel ? { channel } : {}),
          ...(threadTs ? { threadTs } : {}),
        });
        return { id: u.id, title };
      }),
    };
  }

  private byId(id: unknown): FakeFile {
    const file = this.files.find((f) => f.id === id);
    if (!file) throw new SlackApiError("file_not_found");
    return file;
  }

  private nextId(): string {
    this.counter += 1;
    return `F${String(this.counter).padStart(8, "0")}`;
  }
}

/** The body, or undefined when it passes `max` bytes (the rest is read and dropped, so the answer arrives). */
async function readUpTo(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of req) {
    total += (c as Buffer).byteLength;
    if (total <= max) chunks.push(c as Buffer);
  }
  return total > max ? undefined : Buffer.concat(chunks);
}

/** The uploaded bytes: the first file part of a multipart form, else the raw body. */
async function bytesOf(raw: Buffer, contentType: string): Promise<Uint8Array | undefined> {
  if (!contentType.startsWith("multipart/form-data")) return new Uint8Array(raw);
  try {
    const form = await new Response(raw, { headers: { "content-type": contentType } }).formData();
    for (const value of form.values()) {
      if (typeof value !== "string") return new Uint8Array(await value.arrayBuffer());
    }
  } catch {
    // not a form after all
  }
  return undefined;
}
