/**
 * The attacker's HTTP client: plain requests (status, or how the connection failed), bodies of
 * any size streamed over a raw socket (the status line is read even if the server stops
 * reading), and slow-header connections that send one byte a second.
 */
import { request } from "node:http";
import { connect, type Socket } from "node:net";

export interface Answer {
  status?: number;
  /** How it failed when there was no status: reset, timeout, closed, … */
  error?: string;
  ms: number;
}

export interface Req {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export function send(base: string, r: Req, timeoutMs = 15_000): Promise<Answer> {
  const url = new URL(base);
  const started = Date.now();
  return new Promise((resolve) => {
    let done = false;
    const finish = (a: Omit<Answer, "ms">) => {
      if (done) return;
      done = true;
      resolve({ ...a, ms: Date.now() - started });
    };
    const req = request(
      { host: url.hostname, port: url.port, path: r.path, method: r.method, headers: r.headers, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => finish({ status: res.statusCode ?? 0 }));
        res.on("error", () => finish({ status: res.statusCode ?? 0 }));
      },
    );
    req.setTimeout(timeoutMs, () => {
      finish({ error: "timeout" });
      req.destroy();
    });
    req.on("error", (err: NodeJS.ErrnoException) => finish({ error: err.code ?? err.message }));
    req.end(r.body);
  });
}

/** POSTs a JSON body of `size` bytes (`{"x":"aaa…"}`), stopping once a status line arrives. */
export function sendBig(base: string, r: Omit<Req, "body">, size: number, timeoutMs = 120_000): Promise<Answer> {
  const url = new URL(base);
  const started = Date.now();
  const head = [`${r.method} ${r.path} HTTP/1.1`, `Host: ${url.host}`, `Content-Length: ${size}`, "Connection: close"];
  for (const [k, v] of Object.entries(r.headers ?? {})) head.push(`${k}: ${v}`);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = "";
    let status: number | undefined;
    let error: string | undefined;
    const timer = setTimeout(() => {
      error ??= "timeout";
      socket.destroy();
    }, timeoutMs);
    socket.on("data", (d: Buffer) => {
      received += d.toString("latin1");
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(received);
      if (m && status === undefined) status = Number(m[1]);
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      error ??= err.code ?? err.message;
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(
        status !== undefined ? { status, ms: Date.now() - started } : { error: error ?? "closed", ms: Date.now() - started },
      );
    });
    socket.on("connect", () => void writeBody(socket, `${head.join("\r\n")}\r\n\r\n`, size, () => status !== undefined));
  });
}

async function writeBody(socket: Socket, head: string, size: number, answered: () => boolean): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, "a");
  const prefix = '{"x":"';
  let left = size - prefix.length - 2;
  // Like a client sending Expect: 100-continue: a server may refuse on the headers alone (413 by
  // Content-Length, 401, 405), and that answer must be read before a close can reset it away.
  socket.write(head);
  for (let waited = 0; waited < 200 && !answered() && !socket.destroyed; waited += 10) await sleepMs(10);
  if (answered() || socket.destroyed) return void socket.destroy();
  if (!socket.write(prefix)) await drained(socket);
  while (left > 0 && !answered() && !socket.destroyed) {
    const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
    left -= part.length;
    if (!socket.write(part)) await drained(socket);
  }
  if (!answered() && !socket.destroyed) socket.write('"}');
  // Read the answer if it has not come yet; the timer ends a server that never answers.
  if (answered()) socket.destroy();
}

const sleepMs = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function drained(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off("drain", done);
      socket.off("close", done);
      resolve();
    };
    socket.on("drain", done);
    socket.on("close", done);
  });
}

export interface SlowResult {
  /** ms after which the server closed each connection it closed. */
  closedAfter: number[];
  /** Statuses the server sent before closing (e.g. 408). */
  statuses: number[];
  stillOpen: number;
  /** Connections refused or reset while opening. */
  refused: number;
}

/** Opens `count` connections that send a request's headers one byte a second, for `windowMs`. */
export async function slowHeaders(base: string, path: string, count: number, windowMs: number): Promise<SlowResult> {
  const url = new URL(base);
  const result: SlowResult = { closedAfter: [], statuses: [], stillOpen: 0, refused: 0 };
  const sockets: Socket[] = [];
  const line = `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nX-Slow: ${"a".repeat(10_000)}`;
  const started = Date.now();
  for (let i = 0; i < count; i++) {
    const s = connect(Number(url.port), url.hostname);
    let sent = 0;
    let connected = false;
    const tick = setInterval(() => {
      if (!s.destroyed && sent < line.length) s.write(line[sent++] as string);
    }, 1_000);
    s.on("connect", () => {
      connected = true;
      s.write(line.slice(0, 20));
      sent = 20;
    });
    s.on("data", (d: Buffer) => {
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(d.toString("latin1"));
      if (m) result.statuses.push(Number(m[1]));
    });
    s.on("error", () => {
      if (!connected) result.refused++;
    });
    s.on("close", () => {
      clearInterval(tick);
      if (connected && Date.now() - started < windowMs) result.closedAfter.push(Date.now() - started);
    });
    sockets.push(s);
  }
  await new Promise((r) => setTimeout(r, windowMs));
  for (const s of sockets) {
    if (!s.destroyed && s.readyState === "open") result.stillOpen++;
    s.destroy();
  }
  return result;
}
