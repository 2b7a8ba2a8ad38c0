/**
 * The files the agent sent to the web chat, kept in memory for the page to download: at most
 * 64 MiB in all, the oldest giving way, each readable only by the browser (client id) it went to.
 * Only raster images show inline; everything else (SVG included) downloads, sandboxed.
 */
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { sendJson } from "../../server/http.js";
import type { OutboundFile } from "../types.js";

/** Files the agent sent, kept in memory for download, at most this many bytes in all. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

interface StoredFile {
  owner: string;
  name: string;
  mime: string;
  data: Uint8Array;
}

export class FileShelf {
  private readonly files = new Map<string, StoredFile>();
  private bytes = 0;

  /** Keeps `file` for `owner` (a client id); returns its id. */
  put(owner: string, file: OutboundFile): string {
    const id = randomBytes(12).toString("base64url");
    this.files.set(id, { owner, name: file.name, mime: file.mime, data: file.data });
    this.bytes += file.data.byteLength;
    // The oldest files give way; a page that still links one gets a 404 that says so.
    for (const [old, stored] of this.files) {
      if (this.bytes <= MAX_FILE_BYTES || old === id) break;
      this.files.delete(old);
      this.bytes -= stored.data.byteLength;
    }
    return id;
  }

  /** Answers a download of file `id` by `client`: the file, or a 404 that says why it may be gone. */
  serve(res: ServerResponse, id: string, client: string | undefined): void {
    const file = this.files.get(id);
    if (!file || file.owner !== client) {
      sendJson(res, 404, { error: "No such file here: it may be from before a restart. Ask the agent to send it again." });
      return;
    }
    const inline = /^image\/(png|jpeg|gif|webp)$/.test(file.mime);
    res.writeHead(200, {
      "content-type": inline ? file.mime : "application/octet-stream",
      "content-length": String(file.data.byteLength),
      "content-disposition": `${inline ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(file.name)}`,
      "content-security-policy": "default-src 'none'; sandbox",
      "x-content-type-options": "nosniff",
      "cache-control": "private, max-age=3600",
    });
    res.end(file.data);
  }
}
