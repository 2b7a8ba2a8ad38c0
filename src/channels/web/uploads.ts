/**
 * Files people attach in the web chat. The page uploads each file on its own
 * (`POST <path>/api/conversations/:conv/uploads`, the raw bytes, bounded by `media.max_file_mb`
 * rather than the server's 1 MiB webhook limit); the message that follows names their ids, and
 * becomes an InboundMessage with attachments like any platform's. The core then checks type and
 * size against `media:` and downloads them through the channel's `download`, which reads them
 * from here. A file over the limit is not uploaded: the message names it (`{name, size, mime}`)
 * and the core refuses it by its stated size with the same notice every platform gets, while the
 * message's text is still handled. Uploads live in memory (128 MiB in all, the oldest giving way), each readable only
 * by the browser that sent it.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { declaredLength } from "../../server/body.js";
import { HttpError, isJsonObject, readBody } from "../../server/http.js";
import { mimeFromName } from "../kit/downloads.js";
import type { InboundAttachment } from "../types.js";

/** Uploads kept at most, in bytes, before the oldest give way. */
const MAX_KEPT_BYTES = 128 * 1024 * 1024;
/** Files one message may carry. */
export const MAX_FILES_PER_MESSAGE = 10;
const UPLOAD_ID = /^[A-Za-z0-9_-]{16}$/;

interface Upload {
  owner: string;
  name: string;
  mime: string;
  data: Uint8Array;
}

export class UploadShelf {
  private readonly uploads = new Map<string, Upload>();
  private bytes = 0;

  constructor(readonly maxFileBytes: number) {}

  /** Reads one upload request from `owner` (a client id); returns the upload's id. */
  async receive(req: IncomingMessage, owner: string): Promise<{ id: string; name: string; size: number }> {
    const header = req.headers["x-file-name"];
    if (typeof header !== "string" || header === "") throw new HttpError(400, "send the file's name in x-file-name");
    let name: string;
    try {
      name = decodeURIComponent(header)
        .replace(/[\\/\0]/g, "_")
        .slice(0, 200);
    } catch {
      throw new HttpError(400, "x-file-name must be percent-encoded UTF-8");
    }
    const mb = Math.round((this.maxFileBytes / 1024 / 1024) * 10) / 10;
    // Closes the connection: the rest of the body must not be read as a request.
    const tooLarge = () =>
      new HttpError(413, `${name} is larger than ${mb} MB, the largest file this chat takes (media.max_file_mb).`, undefined, {
        connection: "close",
      });
    if ((declaredLength(req) ?? 0) > this.maxFileBytes) throw tooLarge();
    const data = await readBody(req, this.maxFileBytes).catch((err: unknown) => {
      throw err instanceof HttpError && err.status === 413 ? tooLarge() : err;
    });
    if (data.byteLength === 0) throw new HttpError(400, `${name} is empty`);
    const given = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    const mime = given && given !== "application/octet-stream" ? given : (mimeFromName(name) ?? "application/octet-stream");
    const id = randomBytes(12).toString("base64url");
    this.uploads.set(id, { owner, name, mime, data });
    this.bytes += data.byteLength;
    for (const [old, upload] of this.uploads) {
      if (this.bytes <= MAX_KEPT_BYTES || old === id) break;
      this.uploads.delete(old);
      this.bytes -= upload.data.byteLength;
    }
    return { id, name, size: data.byteLength };
  }

  /** The attachments a message names (`files`: upload ids), each checked to be `owner`'s. */
  attachments(files: unknown, owner: string): InboundAttachment[] {
    if (files === undefined) return [];
    if (!Array.isArray(files) || files.length > MAX_FILES_PER_MESSAGE) {
      throw new HttpError(400, `files must be a list of at most ${MAX_FILES_PER_MESSAGE} upload ids`);
    }
    return files.map((id): InboundAttachment => {
      if (isJsonObject(id)) return this.oversized(id);
      const upload = typeof id === "string" && UPLOAD_ID.test(id) ? this.uploads.get(id) : undefined;
      if (!upload || upload.owner !== owner) {
        throw new HttpError(404, "An attached file is gone (from before a restart?). Please attach it again.");
      }
      const kind = upload.mime.startsWith("image/") ? "image" : upload.mime.startsWith("audio/") ? "audio" : "file";
      return { kind, name: upload.name, mime: upload.mime, size: upload.data.byteLength, source: { upload: id } };
    });
  }

  /** A file the page did not upload because it is over the limit: the core refuses it by its size. */
  private oversized(file: Record<string, unknown>): InboundAttachment {
    const { name, size, mime } = file;
    if (typeof name !== "string" || !name || typeof size !== "number" || size <= this.maxFileBytes) {
      throw new HttpError(400, "a file named in files is an upload id, or {name, size, mime} for a file over the limit");
    }
    const type = typeof mime === "string" && mime ? mime : "application/octet-stream";
    const kind = type.startsWith("image/") ? "image" : type.startsWith("audio/") ? "audio" : "file";
    return { kind, name: name.slice(0, 200), mime: type, size, source: { oversized: true } };
  }

  /** The bytes of an attachment made by {@link attachments}, for the channel's `download`. */
  read(attachment: InboundAttachment, owner: string): Uint8Array {
    const id = attachment.source.upload;
    const upload = typeof id === "string" ? this.uploads.get(id) : undefined;
    if (!upload || upload.owner !== owner) {
      throw new Error(`the upload of ${attachment.name} is gone (the gateway restarted?); attach it again`);
    }
    return upload.data;
  }
}
