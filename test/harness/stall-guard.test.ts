import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ModelStallError, stallGuardedFetch } from "../../src/harness/models/stall-guard.js";
import { closeServer } from "../../src/server/http.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let server: Server | undefined;
afterEach(async () => {
  if (server) await closeServer(server);
  server = undefined;
});

/** A server that writes `parts`, pausing `gapMs` before each (and holding the response open at the end when `hang`). */
async function serve(parts: string[], gapMs: number, hang = false): Promise<string> {
  server = createServer(async (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    for (const part of parts) {
      await sleep(gapMs);
      res.write(part);
    }
    if (!hang) res.end();
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

async function readAll(res: Response, pauseMs = 0): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
    if (pauseMs) await sleep(pauseMs);
  }
}

describe("stallGuardedFetch", () => {
  it("passes a body whose gaps stay under the idle limit, whole", async () => {
    const url = await serve(["a", "b", "c", "d"], 60);
    const res = await stallGuardedFetch(200)(url);
    expect(await readAll(res)).toBe("abcd");
  });

  it("does not count time the reader itself takes as a stall", async () => {
    const url = await serve(["a", "b", "c"], 10);
    const res = await stallGuardedFetch(100)(url);
    // The caller pauses longer than the idle limit after every chunk; the model did not stall.
    expect(await readAll(res, 250)).toBe("abc");
  });

  it("ends a body that stops mid-way with a ModelStallError", async () => {
    const url = await serve(["a", "b"], 10, true);
    const res = await stallGuardedFetch(150)(url);
    await expect(readAll(res)).rejects.toBeInstanceOf(ModelStallError);
  });
});
