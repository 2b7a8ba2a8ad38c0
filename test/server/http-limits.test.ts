/**
 * The HTTP server's own limits, over real sockets: body cap (413 before any handler work),
 * 100-continue, aborted clients, header/request/keep-alive timeouts, the connection cap, the
 * paused state (503 + Retry-After for webhooks) and rate-limited log lines for refusals.
 */
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AppConfigSchema } from "../../src/config/schema.js";
import { createLogger } from "../../src/log/logger.js";
import { type HttpLimits, HttpServer, readBody, sendJson } from "../../src/server/http.js";
import { RejectLog } from "../../src/server/reject-log.js";
import { sleep } from "../contract/gateway.js";

const CAP = 64 * 1024;

interface LogLine {
  level: number;
  msg: string;
  route?: string;
  reason?: string;
  suppressed?: number;
  err?: unknown;
}

let server: HttpServer | undefined;
let lines: LogLine[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
  server = undefined;
});

/** A server with a small body cap; `/echo` reads the body through the shared reader. */
async function start(limits: Partial<HttpLimits> = {}) {
  lines = [];
  const logger = createLogger({
    level: "trace",
    format: "json",
    destination: { write: (l: string) => void lines.push(JSON.parse(l) as LogLine) },
  });
  const s = new HttpServer({ host: "127.0.0.1", port: 0, logger, limits: { maxBodyBytes: CAP, ...limits } });
  const calls = { handler: 0, afterRead: 0 };
  s.route("POST", "/echo", async (req, res) => {
    calls.handler += 1;
    const body = await readBody(req);
    calls.afterRead += 1;
    sendJson(res, 200, { bytes: body.length });
  });
  s.route("GET", "/healthz", (_req, res) => sendJson(res, 200, { ok: true }), { alwaysOpen: true });
  const { port } = await s.listen();
  server = s;
  return { server: s, calls, port, url: `http://127.0.0.1:${port}` };
}

function raw(port: number): Socket {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  sockets.push(socket);
  return socket;
}

/** Resolves with what the server wrote and when the socket closed (ms after `since`). */
function closed(socket: Socket, since: number): Promise<{ text: string; ms: number }> {
  let text = "";
  socket.on("data", (d) => {
    text += d.toString();
  });
  return new Promise((resolve) => socket.on("close", () => resolve({ text, ms: Date.now() - since })));
}

const errorsLogged = () => lines.filter((l) => l.level >= 50);

function chunkedBody(total: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= total) return controller.close();
      sent += 16 * 1024;
      controller.enqueue(new Uint8Array(16 * 1024));
    },
  });
}

describe("request bodies", () => {
  it("answers 413 to a body announced over the cap, before the handler runs", async () => {
    const { calls, url } = await start();
    const res = await fetch(`${url}/echo`, { method: "POST", body: new Uint8Array(10 * CAP) });
    expect(res.status).toBe(413);
    expect(res.headers.get("connection")).toBe("close");
    expect(await res.json()).toEqual({ error: `request body over ${CAP} bytes` });
    expect(calls.handler).toBe(0);
    expect(errorsLogged()).toEqual([]);
    expect(lines.find((l) => l.msg === "http request refused")).toMatchObject({ level: 40, route: "/echo" });
  });

  it("stops reading a chunked body at the cap: 413, and nothing after the read runs", async () => {
    const { calls, url } = await start();
    const big = await fetch(`${url}/echo`, { method: "POST", body: chunkedBody(100 * CAP), duplex: "half" } as RequestInit);
    expect(big.status).toBe(413);
    expect(calls).toEqual({ handler: 1, afterRead: 0 });
    const exact = await fetch(`${url}/echo`, { method: "POST", body: chunkedBody(CAP), duplex: "half" } as RequestInit);
    expect(exact.status).toBe(200);
    expect(await exact.json()).toEqual({ bytes: CAP });
    expect(errorsLogged()).toEqual([]);
  });

  it("tells a client waiting for 100-continue 413 without taking its body", async () => {
    const { port } = await start();
    let continued = false;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          port,
          host: "127.0.0.1",
          method: "POST",
          path: "/echo",
          headers: { expect: "100-continue", "content-length": 10 * CAP },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("continue", () => {
        continued = true;
      });
      req.on("error", reject);
      req.flushHeaders();
    });
    expect(status).toBe(413);
    expect(continued).toBe(false);
  });

  it("logs a client that aborts mid-body at debug level, not as an error, and keeps serving", async () => {
    const { port, url } = await start();
    const socket = raw(port);
    socket.write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789");
    await sleep(100);
    socket.destroy();
    await sleep(200);
    expect(lines.find((l) => /closed the connection/.test(l.msg))).toMatchObject({ level: 20, route: "/echo" });
    expect(errorsLogged()).toEqual([]);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});

describe("timeouts and the connection cap", () => {
  it("closes a connection that is slow to send its headers, or its body, with 408", async () => {
    const { port } = await start({ headersTimeoutMs: 300, requestTimeoutMs: 800 });
    const t0 = Date.now();
    const slowHeaders = raw(port);
    slowHeaders.write("POST /echo HTTP/1.1\r\nHost: x\r\n");
    const slowBody = raw(port);
    slowBody.write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc");
    const [headers, body] = await Promise.all([closed(slowHeaders, t0), closed(slowBody, t0)]);
    expect(headers.text).toMatch(/^HTTP\/1\.1 408/);
    expect(headers.ms).toBeGreaterThanOrEqual(250);
    expect(headers.ms).toBeLessThan(1_500);
    expect(body.text).toMatch(/^HTTP\/1\.1 408/);
    expect(body.ms).toBeGreaterThanOrEqual(750);
    expect(body.ms).toBeLessThan(2_500);
    expect(errorsLogged()).toEqual([]);
  });

  it("closes an idle keep-alive connection after keep_alive_timeout_ms", async () => {
    const { port } = await start({ keepAliveTimeoutMs: 300 });
    const socket = raw(port);
    const t0 = Date.now();
    const done = closed(socket, t0);
    socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    const { text, ms } = await done;
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(2_000);
  });

  it("refuses connections beyond max_connections and keeps serving the open ones", async () => {
    const { port } = await start({ maxConnections: 2 });
    const open = [raw(port), raw(port)];
    await Promise.all(open.map((s) => new Promise((r) => s.once("connect", r))));
    await sleep(50);
    const third = raw(port);
    const refused = await closed(third, Date.now());
    expect(refused.text).toBe("");
    expect(refused.ms).toBeLessThan(1_000);
    const first = open[0] as Socket;
    const answer = new Promise<string>((resolve) => first.once("data", (d) => resolve(d.toString())));
    first.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(await answer).toMatch(/^HTTP\/1\.1 200/);
    expect(lines.find((l) => /max_connections/.test(l.reason ?? ""))).toMatchObject({ level: 40 });
  });

  it("takes its limits from server.* in the config, and refuses a header timeout over the request timeout", () => {
    const config = AppConfigSchema.parse({ server: { max_body_bytes: "2048", headers_timeout_ms: 500 } });
    expect(config.server).toMatchObject({ max_body_bytes: 2048, headers_timeout_ms: 500, request_timeout_ms: 30_000 });
    const bad = AppConfigSchema.safeParse({ server: { headers_timeout_ms: 60_000, request_timeout_ms: 30_000 } });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain("headers_timeout_ms");
  });
});

describe("pausing while the gateway starts or drains", () => {
  it("answers 503 with Retry-After on webhook routes and unknown paths; open routes still answer", async () => {
    const { server: s, calls, url } = await start();
    s.pause("starting");
    const hook = await fetch(`${url}/echo`, { method: "POST", body: "{}" });
    expect(hook.status).toBe(503);
    expect(hook.headers.get("retry-after")).toBe("5");
    expect((await fetch(`${url}/not-yet-mounted`, { method: "POST", body: "{}" })).status).toBe(503);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(calls.handler).toBe(0);
    s.resume();
    expect((await fetch(`${url}/echo`, { method: "POST", body: "{}" })).status).toBe(200);
    expect((await fetch(`${url}/not-yet-mounted`, { method: "POST", body: "{}" })).status).toBe(404);
  });
});

describe("log lines for refused requests", () => {
  it("writes one line per route and reason per window, and counts the ones left out", async () => {
    const { url } = await start();
    await Promise.all(Array.from({ length: 20 }, () => fetch(`${url}/echo`, { method: "POST", body: new Uint8Array(2 * CAP) })));
    expect(lines.filter((l) => l.msg === "http request refused")).toHaveLength(1);

    const logged: Array<Record<string, unknown>> = [];
    const logger = { warn: (o: Record<string, unknown>) => void logged.push(o) } as never;
    let now = 0;
    const log = new RejectLog(logger, 10_000, () => now);
    for (let i = 0; i < 5; i++) log.note("/a", 401, "bad signature");
    log.note("/a", 400, "not JSON");
    log.note("/b", 401, "bad signature");
    now = 10_000;
    log.note("/a", 401, "bad signature");
    expect(logged).toEqual([
      { route: "/a", status: 401, reason: "bad signature" },
      { route: "/a", status: 400, reason: "not JSON" },
      { route: "/b", status: 401, reason: "bad signature" },
      { route: "/a", status: 401, reason: "bad signature", suppressed: 4 },
    ]);
  });
});
