/**
 * A fault every platform fake offers on its file downloads: the next download never answers
 * (`no-answer`: the request is read and nothing comes back, not even a status line), or its body
 * stalls after the headers (`body-stalls`: status, headers with the full Content-Length, and half
 * the bytes, then nothing). The fake keeps the connection open until the client gives up or the
 * fake closes, and counts both, so a test can tell that the client really ended the request.
 */
import type { ServerResponse } from "node:http";

export type DownloadStall = "no-answer" | "body-stalls";

export class DownloadStalls {
  /** Downloads held so far. */
  held = 0;
  /** Held downloads whose connection the client closed (it aborted the request). */
  abandoned = 0;
  private readonly queued: DownloadStall[] = [];

  /** The next `times` downloads stall in `mode`. */
  next(mode: DownloadStall, times = 1): void {
    for (let i = 0; i < times; i++) this.queued.push(mode);
  }

  /**
   * Holds this download when a stall is due and returns true (the fake then writes nothing
   * more); false when it should be served as usual. `data` must have at least 2 bytes.
   */
  take(res: ServerResponse, data: Uint8Array, headers: Record<string, string>): boolean {
    const mode = this.queued.shift();
    if (!mode) return false;
    this.held++;
    res.once("close", () => {
      if (!res.writableEnded) this.abandoned++;
    });
    if (mode === "body-stalls") {
      res.writeHead(200, { ...headers, "content-length": String(data.byteLength) });
      res.write(Buffer.from(data.subarray(0, Math.max(1, Math.floor(data.byteLength / 2)))));
    }
    return true;
  }
}
