/**
 * The one HTTP server: routing, and staying up whatever a client sends.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HttpServer, RouteConflictError } from "../../src/server/http.js";
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

  it("refuses a second route at the same method and path, naming both owners", () => {
    server = new HttpServer({ host: "127.0.0.1", port: 0, logger: testLogger() });
    server.mount("slack").route("POST", "/slack/events", () => {});
    const err = (() => {
      try {
        server.mount("slack_two").route("POST", "/slack/events/", () => {});
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(RouteConflictError);
    expect((err as Error).message).toMatch(/POST \/slack\/events is already mounted by channel "slack".*channel "slack_two"/);
    // Another method at the path is another route; "*" takes every method.
    server.mount("slack_two").route("GET", "/slack/events", () => {});
    expect(() => server?.mount("x").route("*", "/slack/events", () => {})).toThrow(RouteConflictError);
  });

  it("unroute takes down only its owner's routes at a path", async () => {
    server = new HttpServer({ host: "127.0.0.1", port: 0, logger: testLogger() });
    const one = server.mount("one");
    const two = server.mount("two");
    one.route("POST", "/hook", (_req, res) => res.end("one"));
    two.route("GET", "/hook", (_req, res) => res.end("two"));
    two.route("POST", "/webhooks/two", (_req, res) => res.end("two"));
    const { port } = await server.listen();
    one.unroute("/hook");
    one.unroute();
    expect((await fetch(`http://127.0.0.1:${port}/hook`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/hook`, { method: "POST" })).status).toBe(405);
    two.unroute();
    // A channel's routes that went down answer 503 + Retry-After (it restarts), not 404.
    const parked = await fetch(`http://127.0.0.1:${port}/webhooks/two`, { method: "POST" });
    expect(parked.status).toBe(503);
    expect(parked.headers.get("retry-after")).toBe("5");
    expect(((await parked.json()) as { error: string }).error).toMatch(/channel "two" is not running/);
    expect((await fetch(`http://127.0.0.1:${port}/hook`)).status).toBe(503);
    expect((await fetch(`http://127.0.0.1:${port}/elsewhere`)).status).toBe(404);
    // Mounted again (a restarted instance), the path works as before.
    server.mount("two").route("POST", "/webhooks/two", (_req, res) => res.end("back"));
    const back = await fetch(`http://127.0.0.1:${port}/webhooks/two`, { method: "POST" });
    expect(await back.text()).toBe("back");
  });
});
