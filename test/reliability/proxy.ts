/**
 * A small HTTP proxy on 127.0.0.1 that sits between the gateway and a fake, so a probe can see
 * each request before it reaches the fake and change what the gateway gets back: pass it on
 * (streamed, so long polls and SSE work), answer it itself, or apply it and then lie about it.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface Upstream {
  status: number;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  body: Buffer;
  /** Streams the request to the target and its answer back. */
  pass(): void;
  /** Sends the request to the target and returns its whole answer, without answering the gateway. */
  fetch(): Promise<Upstream>;
}

export interface HttpProxy {
  readonly url: string;
  close(): Promise<void>;
}

export async function startProxy(target: string, handle: (x: Exchange) => void | Promise<void>): Promise<HttpProxy> {
  const base = new URL(target);
  const sockets = new Set<Socket>();
  const forward = (req: IncomingMessage, body: Buffer, onResponse: (up: IncomingMessage) => void, onError: () => void) => {
    const up = request(
      { host: base.hostname, port: base.port, path: req.url, method: req.method, headers: req.headers },
      onResponse,
    );
    up.on("error", onError);
    up.end(body);
    return up;
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const exchange: Exchange = {
        req,
        res,
        body,
        pass() {
          const up = forward(
            req,
            body,
            (upRes) => {
              res.writeHead(upRes.statusCode ?? 502, upRes.headers);
              upRes.pipe(res);
              // A dropped upstream connection must reach the gateway as a dropped connection.
              upRes.on("aborted", () => res.destroy());
              upRes.on("error", () => res.destroy());
            },
            () => res.destroy(),
          );
          res.on("close", () => up.destroy());
        },
        fetch: () =>
          new Promise((resolve, reject) => {
            forward(
              req,
              body,
              (upRes) => {
                const parts: Buffer[] = [];
                upRes.on("data", (c: Buffer) => parts.push(c));
                upRes.on("end", () =>
                  resolve({ status: upRes.statusCode ?? 502, headers: upRes.headers, body: Buffer.concat(parts) }),
                );
                upRes.on("error", reject);
              },
              () => reject(new Error("upstream failed")),
            );
          }),
      };
      Promise.resolve(handle(exchange)).catch(() => res.destroy());
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
