/**
 * The one HTTP server: routing, and staying up whatever a client sends.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HttpServer } from "../../src/server/http.js";
import { testLogger } from "../contract/gateway.js";

let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("HttpServer", () => {
  it("answers 400 to a path with broken percent-encoding instead of crashing the process", async () => {
    server = new HttpServer({ host: "127.0.0.1", port: 0, logger: testLogger() });
    const seen: string[] = [];
    server.route("GET", "/api/channels/:name", (_req, res, params) => {
      seen.push(params.name ?? "");
      res.end("ok");
    });
    const rejections: unknown[] = [];
    const onRejection = (err: unknown) => rejections.push(err);
    process.on("unhandledRejection", onRejection);
    try {
      const { port } = await server.listen();
      const bad = await fetch(`http://127.0.0.1:${port}/api/channels/%E0%A4%A`);
      expect(bad.status).toBe(400);
      // The server still works, and decodes well-formed escapes.
      const good = await fetch(`http://127.0.0.1:${port}/api/channels/a%20b`);
      expect(good.status).toBe(200);
      expect(seen).toEqual(["a b"]);
      await new Promise((r) => setImmediate(r));
      expect(rejections).toEqual([]);
    } finally {
      process.off("unhandledRejection", onRejection);
    }
  });
});
