/**
 * Downloads for adapters: read a platform's file without holding more than the limit in memory.
 * `fetchBounded` stops reading as soon as the body passes `maxBytes` (or says so in its
 * Content-Length) and throws `FileTooLargeError`, so an over-limit file costs at most the limit.
 */
import { ChannelError, FileTooLargeError } from "../../errors.js";

/**
 * Refuses a file whose size the platform stated (`size`, e.g. `attachment.size`) is over
 * `maxBytes`, before anything is asked of the platform.
 */
export function refuseStatedSize(channel: string, size: number | undefined, maxBytes: number): void {
  if (size !== undefined && size > maxBytes) throw new FileTooLargeError(channel, maxBytes, size);
}

/** Reads a stream of chunks, refusing it once it passes `maxBytes`. */
export async function readBounded(
  channel: string,
  body: AsyncIterable<Uint8Array> | null,
  maxBytes: number,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (body) {
    for await (const chunk of body) {
      total += chunk.byteLength;
      if (total > maxBytes) throw new FileTooLargeError(channel, maxBytes);
      chunks.push(chunk);
    }
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/**
 * GETs `url` and returns its body, at most `maxBytes` of it. A non-2xx answer is a
 * `ChannelError` naming the status (`not_found` for 404, `auth_failed` for 401/403). `init.signal`
 * covers the whole download, the body too: when it aborts, this rejects with its reason.
 */
export async function fetchBounded(channel: string, url: string, maxBytes: number, init: RequestInit = {}): Promise<Uint8Array> {
  const signal = init.signal ?? undefined;
  let res: Response;
  try {
    res = await fetch(url, { redirect: "follow", ...init });
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw new ChannelError(channel, "network", `downloading a file failed: ${(err as Error).message}`, { cause: err });
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    const code = res.status === 404 ? "not_found" : res.status === 401 || res.status === 403 ? "auth_failed" : "platform_error";
    throw new ChannelError(channel, code, `downloading a file failed: HTTP ${res.status}`);
  }
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw new FileTooLargeError(channel, maxBytes, declared);
  }
  return readResponse(channel, res, maxBytes, signal);
}

/** The body of `res`, bounded; an abort of `signal` while it streams rejects with its reason. */
export async function readResponse(
  channel: string,
  res: Response,
  maxBytes: number,
  signal: AbortSignal | undefined,
): Promise<Uint8Array> {
  try {
    return await readBounded(channel, res.body as AsyncIterable<Uint8Array> | null, maxBytes);
  } catch (err) {
    await res.body?.cancel().catch(() => {});
    if (signal?.aborted) throw signal.reason;
    throw err;
  }
}

/** MIME types by extension, for the files people send a bot; others stay unknown. */
const MIME_BY_EXTENSION: Record<string, string> = {
  pdf: "application/pdf",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ppt: "application/vnd.ms-powerpoint",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  html: "text/html",
  json: "application/json",
  zip: "application/zip",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  mp4: "video/mp4",
  mov: "video/quicktime",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  wav: "audio/wav",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  opus: "audio/ogg",
  webm: "audio/webm",
  amr: "audio/amr",
};

/** The MIME type a file name's extension stands for, when it is a known one. */
export function mimeFromName(name: string): string | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  return ext ? MIME_BY_EXTENSION[ext] : undefined;
}
