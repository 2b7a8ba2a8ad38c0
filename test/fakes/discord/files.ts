/**
 * Files in the fake Discord: the CDN that serves attachments (no auth, signed links that can be
 * made to expire, as Discord's do after about a day), the attachment objects messages carry, and
 * the checks on a bot's multipart upload (10 MiB per file → 413 with code 40005, at most 10
 * files, every `attachments` entry naming an uploaded `files[n]` part).
 */
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { DownloadStalls } from "../download-stalls.js";
import { DiscordApiError, invalidForm } from "./validate.js";
import { type Json, snowflake } from "./world.js";

/** Per file, in a server without boosts and in DMs. */
export const UPLOAD_LIMIT = 10 * 1024 * 1024;
/** Files in one message. */
export const MAX_FILES = 10;
/** The message flag of a voice message. */
export const IS_VOICE_MESSAGE = 1 << 13;

export interface StoredAttachment {
  id: string;
  filename: string;
  contentType?: string;
  size: number;
  data: Uint8Array;
  /** Voice messages: length in seconds and a base64 waveform. */
  durationSecs?: number;
  waveform?: string;
}

/** One part of a multipart body. */
export interface UploadedPart {
  field: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** A file as a user's client uploads it. */
export interface UserUpload {
  name: string;
  data: Uint8Array;
  /** What Discord detected; left out, the attachment has no `content_type`. */
  contentType?: string;
}

export interface CdnFetch {
  attachmentId: string;
  status: number;
  at: number;
}

/** Holds attachment bytes by id, with the channel they were posted in. */
export class Cdn {
  /** Faults of the CDN: a download that never answers, or whose body stalls after the headers. */
  readonly stalls = new DownloadStalls();
  /** Every GET of an attachment link, answered or not. */
  readonly fetches: CdnFetch[] = [];
  private readonly files = new Map<string, { channelId: string; file: StoredAttachment }>();
  private readonly secret = snowflake();
  /** Bumped by `expireLinks`: links signed before it no longer open. */
  private generation = 0;

  constructor(private readonly base: () => string) {}

  /** Keeps a file a user posted; the size is the byte count. */
  fromUser(channelId: string, upload: UserUpload, extra: Partial<StoredAttachment> = {}): StoredAttachment {
    if (upload.data.byteLength > UPLOAD_LIMIT) {
      throw new Error(`fake discord: the client refuses ${upload.name}: over ${UPLOAD_LIMIT} bytes`);
    }
    const file: StoredAttachment = {
      id: snowflake(),
      filename: upload.name,
      size: upload.data.byteLength,
      data: new Uint8Array(upload.data),
      ...(upload.contentType ? { contentType: upload.contentType } : {}),
      ...extra,
    };
    this.files.set(file.id, { channelId, file });
    return file;
  }

  /** Reads a bot's upload: `files[n]` parts described by `body.attachments`. Refuses what Discord refuses. */
  fromBot(channelId: string, body: Json, parts: UploadedPart[]): StoredAttachment[] {
    const uploads = parts.filter((p) => /^files\[\d+\]$/.test(p.field));
    if (uploads.length > MAX_FILES) {
      throw invalidForm(["attachments"], "BASE_TYPE_MAX_LENGTH", `Must be ${MAX_FILES} or fewer in length.`);
    }
    for (const p of uploads) {
      if (p.data.byteLength > UPLOAD_LIMIT) throw new DiscordApiError(413, 40005, "Request entity too large");
    }
    const listed = Array.isArray(body.attachments) ? (body.attachments as Json[]) : [];
    listed.forEach((entry, i) => {
      if (!uploads.some((p) => p.field === `files[${String(entry.id)}]`)) {
        throw invalidForm(["attachments", i, "id"], "ATTACHMENT_NOT_FOUND", "Unknown attachment");
      }
    });
    return uploads.map((p) => {
      const entry = listed.find((e) => p.field === `files[${String(e.id)}]`);
      const filename = typeof entry?.filename === "string" ? entry.filename : p.filename;
      if (!filename) throw invalidForm(["attachments"], "BASE_TYPE_REQUIRED", "A file name is required.");
      const data = new Uint8Array(p.data);
      const file: StoredAttachment = {
        id: snowflake(),
        filename,
        size: data.byteLength,
        data,
        ...(p.contentType ? { contentType: p.contentType } : {}),
      };
      this.files.set(file.id, { channelId, file });
      return file;
    });
  }

  /** The attachment object of the API and the Gateway, with a freshly signed link. */
  json(channelId: string, a: StoredAttachment): Json {
    const url = this.link(channelId, a);
    return {
      id: a.id,
      filename: a.filename,
      size: a.size,
      url,
      proxy_url: url,
      ...(a.contentType ? { content_type: a.contentType } : {}),
      ...(a.durationSecs !== undefined ? { duration_secs: a.durationSecs, waveform: a.waveform ?? "" } : {}),
    };
  }

  /** Links handed out so far stop working; a message fetched again carries new ones. */
  expireLinks(): void {
    this.generation++;
  }

  /** Answers `GET /attachments/:channel/:id/:filename?ex&is&hm`; false when the path is not the CDN's. */
  serve(path: string, query: URLSearchParams, res: ServerResponse): boolean {
    const m = /^\/attachments\/(\d+)\/(\d+)\/([^/]+)$/.exec(path);
    if (!m) return false;
    const [, channelId, id, name] = m as unknown as [string, string, string, string];
    const held = this.files.get(id);
    const ok =
      held !== undefined &&
      held.channelId === channelId &&
      safeDecode(name) === held.file.filename &&
      query.get("hm") === this.sign(channelId, id, query.get("ex") ?? "") &&
      Number.parseInt(query.get("ex") ?? "0", 16) * 1000 > Date.now();
    this.fetches.push({ attachmentId: id, status: ok ? 200 : 404, at: Date.now() });
    if (!ok || !held) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("This content is no longer available.");
      return true;
    }
    const type = { "content-type": held.file.contentType ?? "application/octet-stream" };
    if (this.stalls.take(res, held.file.data, type)) return true;
    res.writeHead(200, { ...type, "content-length": String(held.file.data.byteLength) });
    res.end(Buffer.from(held.file.data));
    return true;
  }

  private link(channelId: string, a: StoredAttachment): string {
    const now = Math.floor(Date.now() / 1000);
    const ex = (now + 24 * 3600).toString(16);
    const query = `ex=${ex}&is=${now.toString(16)}&hm=${this.sign(channelId, a.id, ex)}`;
    return `${this.base()}/attachments/${channelId}/${a.id}/${encodeURIComponent(a.filename)}?${query}&`;
  }

  private sign(channelId: string, id: string, ex: string): string {
    return createHash("sha256").update(`${this.secret}:${this.generation}:${channelId}:${id}:${ex}`).digest("hex");
  }
}

/** Splits a multipart/form-data body into its parts, bytes intact. */
export function parseMultipart(body: Buffer, contentType: string): UploadedPart[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const mark = boundary ? (boundary[1] ?? boundary[2] ?? "") : "";
  if (!mark) return [];
  const delimiter = Buffer.from(`--${mark}`);
  const parts: UploadedPart[] = [];
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === "--") break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    const part = body.subarray(start + 2, next - 2);
    const split = part.indexOf("\r\n\r\n");
    if (split !== -1) parts.push(readPart(part.subarray(0, split).toString("utf8"), part.subarray(split + 4)));
    at = next;
  }
  return parts;
}

function readPart(head: string, data: Buffer): UploadedPart {
  const disposition = /content-disposition:[^\r\n]*/i.exec(head)?.[0] ?? "";
  const field = /\bname="([^"]*)"/.exec(disposition)?.[1] ?? "";
  const filename = /\bfilename="([^"]*)"/.exec(disposition)?.[1];
  const contentType = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1]?.trim();
  return {
    field,
    data,
    ...(filename !== undefined ? { filename: unescapeFormName(filename) } : {}),
    ...(contentType ? { contentType } : {}),
  };
}

/** A form's file name as written: fetch's FormData escapes only `"`, CR and LF. */
function unescapeFormName(name: string): string {
  return name.replace(/%22/g, '"').replace(/%0D/gi, "\r").replace(/%0A/gi, "\n");
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
