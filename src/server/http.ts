/**
 * Antler's one HTTP server. Admin routes and the channels' webhook routes mount here, so a
 * deployment exposes one port. Handlers get Node's own request/response objects, because the
 * platform SDKs' webhook handlers expect exactly those.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../log/logger.js";

export type RouteParams = Record<string, string>;
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, params: RouteParams) => unknown;

interface Route {
  method: string;
  parts: string[];
  handler: RouteHandler;
}

export interface HttpServerOptions {
  host: string;
  port: number;
  logger: Logger;
}

export class HttpServer {
  private readonly routes: Route[] = [];
  private server: Server | undefined;

  constructor(private readonly options: HttpServerOptions) {}

  /** Mounts a handler. `path` may hold `:name` segments; `method` "*" matches any method. */
  route(method: string, path: string, handler: RouteHandler): void {
    this.routes.push({ method: method.toUpperCase(), parts: split(path), handler });
  }

  /** Removes every route mounted at `path` (a channel that stops takes its webhook down). */
  unroute(path: string): void {
    const parts = split(path).join("/");
    for (let i = this.routes.length - 1; i >= 0; i--) if (this.routes[i]?.parts.join("/") === parts) this.routes.splice(i, 1);
  }

  async listen(): Promise<AddressInfo> {
    const server = createServer((req, res) => {
      // Nothing a client sends may become an unhandled rejection: that would end the process.
      this.dispatch(req, res).catch((err: unknown) => {
        this.options.logger.error({ err }, "http request failed");
        if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
        else res.end();
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    return server.address() as AddressInfo;
  }

  /** The bound address, once listening. */
  address(): AddressInfo | undefined {
    return (this.server?.address() as AddressInfo | null) ?? undefined;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await closeServer(server);
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const parts = split(url.pathname);
    let pathMatched = false;
    for (const route of this.routes) {
      let params: RouteParams | undefined;
      try {
        params = match(route.parts, parts);
      } catch {
        // A path parameter with broken percent-encoding (e.g. "%E0%A4%A").
        sendJson(res, 400, { error: "malformed path" });
        return;
      }
      if (!params) continue;
      pathMatched = true;
      if (route.method !== "*" && route.method !== req.method) continue;
      try {
        await route.handler(req, res, params);
      } catch (err) {
        this.options.logger.error({ err, path: url.pathname }, "http handler failed");
        if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
        else res.end();
      }
      return;
    }
    sendJson(res, pathMatched ? 405 : 404, { error: pathMatched ? "method not allowed" : "not found" });
  }
}

/** Stops a Node HTTP server now: drops keep-alive connections instead of waiting them out. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function split(path: string): string[] {
  return path.split("/").filter(Boolean);
}

function match(pattern: string[], actual: string[]): RouteParams | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: RouteParams = {};
  for (const [i, p] of pattern.entries()) {
    const a = actual[i] as string;
    if (p.startsWith(":")) params[p.slice(1)] = decodeURIComponent(a);
    else if (p !== a) return undefined;
  }
  return params;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(text);
}

/** Reads a request body whole. Rejects bodies over `limit` bytes. */
export async function readBody(req: IncomingMessage, limit = 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error(`request body over ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
