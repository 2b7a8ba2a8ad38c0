/**
 * Antler's one HTTP server. Admin routes and the channels' webhook routes mount here, so a
 * deployment exposes one port. Handlers get Node's own request/response objects, because the
 * platform SDKs' webhook handlers expect exactly those.
 *
 * It protects itself: timeouts on headers, whole requests and idle keep-alive connections, a cap
 * on open connections, and a cap on body size checked before any handler runs (see `body.ts`).
 * While the gateway starts or drains it is paused: webhook routes answer 503 with Retry-After,
 * so platforms deliver again later; routes mounted with `alwaysOpen` (health, admin) still answer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { AppConfig } from "../config/schema.js";
import { AntlerError } from "../errors.js";
import type { Logger } from "../log/logger.js";
import { bodyTooLarge, ClientAbortedError, DEFAULT_MAX_BODY_BYTES, declaredLength, HttpError, limitBody } from "./body.js";
import { RejectLog } from "./reject-log.js";

export { ClientAbortedError, HttpError, isJsonObject, readBody, readJson } from "./body.js";

export type RouteParams = Record<string, string>;
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, params: RouteParams) => unknown;

export interface RouteOptions {
  /** Answer even while the server is paused (health, readiness, admin). Webhook routes are not. */
  alwaysOpen?: boolean;
  /** The channel that mounts it; `unroute` takes down only its owner's routes. */
  owner?: string;
  /** The largest body this route takes, when it differs from `server.max_body_bytes` (an upload route). */
  maxBodyBytes?: number;
}

interface Route {
  method: string;
  parts: string[];
  handler: RouteHandler;
  alwaysOpen: boolean;
  owner: string | undefined;
  maxBodyBytes: number | undefined;
}

/** The routes of one owner (a channel): what a channel gets as its `http`. */
export interface OwnedRoutes {
  /** Mounts a handler for this owner; throws {@link RouteConflictError} when another route has the path. */
  route(method: string, path: string, handler: RouteHandler, options?: { maxBodyBytes?: number }): void;
  /** Takes down this owner's routes at `path`, or all of them; other owners' routes stay. */
  unroute(path?: string): void;
}

/** Two routes want the same method and path; the message names both owners. */
export class RouteConflictError extends AntlerError {
  constructor(method: string, path: string, holder: string | undefined, wanted: string | undefined) {
    super(
      "route_conflict",
      `${method} ${path} is already mounted by ${ownerName(holder)}, so ${ownerName(wanted)} cannot mount it: give one of them another path`,
    );
  }
}

function ownerName(owner: string | undefined): string {
  return owner === undefined ? "Antler itself" : `channel "${owner}"`;
}

interface Lookup {
  route?: Route;
  params: RouteParams;
  /** Some route has this path, perhaps for another method. */
  pathMatched: boolean;
  name: string;
}

/** Connection and request limits; `server.*` in the config. */
export interface HttpLimits {
  /** Time a client has to send the request headers. */
  headersTimeoutMs: number;
  /** Time a client has to send the whole request, body included. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** Open connections at most; more are closed as they arrive. */
  maxConnections: number;
  /** Request bodies larger than this get 413. */
  maxBodyBytes: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
};

/** The limits from the config's `server` section. */
export function httpLimits(server: AppConfig["server"]): HttpLimits {
  return {
    headersTimeoutMs: server.headers_timeout_ms,
    requestTimeoutMs: server.request_timeout_ms,
    keepAliveTimeoutMs: server.keep_alive_timeout_ms,
    maxConnections: server.max_connections,
    maxBodyBytes: server.max_body_bytes,
  };
}

/** Why the server is paused: the gateway is starting, or draining before it stops. */
export type PauseReason = "starting" | "draining";

/** Seconds a platform is asked to wait before delivering again while the server is paused. */
export const PAUSED_RETRY_AFTER_S = 5;

export interface HttpServerOptions {
  host: string;
  port: number;
  logger: Logger;
  limits?: Partial<HttpLimits>;
}

export class HttpServer {
  private readonly routes: Route[] = [];
  /**
   * Routes a channel took down (it stopped, or restarts): they answer 503 with Retry-After
   * rather than 404, so a platform delivers again and a page tries again, until a route comes back.
   */
  private readonly parked: Array<{ parts: string[]; owner: string }> = [];
  private server: Server | undefined;
  private readonly limits: HttpLimits;
  private readonly rejections: RejectLog;
  private paused: PauseReason | undefined;

  constructor(private readonly options: HttpServerOptions) {
    this.limits = { ...DEFAULT_HTTP_LIMITS, ...options.limits };
    this.rejections = new RejectLog(options.logger);
  }

  /**
   * Mounts a handler. `path` may hold `:name` segments; `method` "*" matches any method. A second
   * route with the same method and path is refused with a {@link RouteConflictError}.
   */
  route(method: string, path: string, handler: RouteHandler, options: RouteOptions = {}): void {
    const upper = method.toUpperCase();
    const parts = split(path);
    const key = parts.join("/");
    const taken = this.routes.find((r) => r.parts.join("/") === key && (r.method === upper || r.method === "*" || upper === "*"));
    if (taken) throw new RouteConflictError(upper, `/${key}`, taken.owner, options.owner);
    this.routes.push({
      method: upper,
      parts,
      handler,
      alwaysOpen: options.alwaysOpen === true,
      owner: options.owner,
      maxBodyBytes: options.maxBodyBytes,
    });
    for (let i = this.parked.length - 1; i >= 0; i--) if (this.parked[i]?.parts.join("/") === key) this.parked.splice(i, 1);
  }

  /**
   * Removes the routes `owner` mounted at `path` (undefined `owner`: those mounted without one);
   * another owner's route at the same path stays.
   */
  unroute(path: string | undefined, owner?: string): void {
    const parts = path === undefined ? undefined : split(path).join("/");
    for (let i = this.routes.length - 1; i >= 0; i--) {
      const route = this.routes[i] as Route;
      if (route.owner !== owner || (parts !== undefined && route.parts.join("/") !== parts)) continue;
      this.routes.splice(i, 1);
      if (owner !== undefined && !this.parked.some((p) => p.parts.join("/") === route.parts.join("/"))) {
        this.parked.push({ parts: route.parts, owner });
      }
    }
  }

  /** The routes of one channel: it mounts and takes down only its own. */
  mount(owner: string): OwnedRoutes {
    return {
      route: (method, path, handler, options) => this.route(method, path, handler, { ...options, owner }),
      unroute: (path) => this.unroute(path, owner),
    };
  }

  /** Webhook routes (and unknown paths) answer 503 with Retry-After until {@link resume}. */
  pause(reason: PauseReason): void {
    this.paused = reason;
  }

  resume(): void {
    this.paused = undefined;
  }

  /** Why the server is paused, or undefined while it takes every request. */
  get pausedFor(): PauseReason | undefined {
    return this.paused;
  }

  async listen(): Promise<AddressInfo> {
    const limits = this.limits;
    const server = createServer({
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two timeouts above only this often (30 s by default).
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    });
    server.maxConnections = limits.maxConnections;
    server.on("request", (req: IncomingMessage, res: ServerResponse) => this.receive(req, res));
    // A client that announces a body over the cap and waits for "100 Continue" never sends it.
    server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
      if ((declaredLength(req) ?? 0) <= limits.maxBodyBytes) res.writeContinue();
      this.receive(req, res);
    });
    server.on("drop", () => this.rejections.note("*", 503, `over server.max_connections (${limits.maxConnections})`));
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

  private receive(req: IncomingMessage, res: ServerResponse): void {
    if (res.writableEnded) return;
    let found: Lookup;
    try {
      found = this.lookup(req);
    } catch {
      // A path parameter with broken percent-encoding (e.g. "%E0%A4%A").
      sendJson(res, 400, { error: "malformed path" });
      return;
    }
    const limit = found.route?.maxBodyBytes ?? this.limits.maxBodyBytes;
    limitBody(req, limit);
    if (this.tooLarge(req, res, found.name, limit)) return;
    const route = found.route;
    if (!route) {
      const parked = found.pathMatched ? undefined : this.parkedFor(req);
      // While starting, the webhook routes may not be mounted yet: ask the platform to come back.
      if (this.paused && !found.pathMatched) this.answerPaused(res, found.name);
      else if (parked) this.answerParked(res, parked);
      else sendJson(res, found.pathMatched ? 405 : 404, { error: found.pathMatched ? "method not allowed" : "not found" });
      return;
    }
    if (this.paused && !route.alwaysOpen) {
      this.answerPaused(res, found.name);
      return;
    }
    // Nothing a client sends may become an unhandled rejection: that would end the process.
    Promise.resolve()
      .then(() => route.handler(req, res, found.params))
      .catch((err: unknown) => this.failed(req, res, found.name, err));
  }

  /** The route for a request; `name` (its pattern, or "*") keys log lines. Throws on a malformed path. */
  private lookup(req: IncomingMessage): Lookup {
    const parts = split(new URL(req.url ?? "/", "http://localhost").pathname);
    let pathMatched = false;
    for (const route of this.routes) {
      const params = match(route.parts, parts);
      if (!params) continue;
      pathMatched = true;
      if (route.method === "*" || route.method === req.method)
        return { route, params, pathMatched, name: `/${route.parts.join("/")}` };
    }
    return { params: {}, pathMatched, name: "*" };
  }

  /** Answers 413 at once, before any handler runs, when the announced body is over the cap. */
  private tooLarge(req: IncomingMessage, res: ServerResponse, route: string, limit: number): boolean {
    if ((declaredLength(req) ?? 0) <= limit) return false;
    if (!res.writableEnded) this.refuse(route, res, bodyTooLarge(limit));
    return true;
  }

  /** The channel whose route at this path is down for now, if any. */
  private parkedFor(req: IncomingMessage): string | undefined {
    const parts = split(new URL(req.url ?? "/", "http://localhost").pathname);
    return this.parked.find((p) => match(p.parts, parts))?.owner;
  }

  private answerParked(res: ServerResponse, owner: string): void {
    const reason = `channel "${owner}" is not running right now`;
    this.rejections.note(`/${owner}`, 503, reason, "info");
    sendJson(res, 503, { error: `${reason}; try again shortly` }, { "retry-after": String(PAUSED_RETRY_AFTER_S) });
  }

  private answerPaused(res: ServerResponse, route: string): void {
    const reason = this.paused === "starting" ? "the gateway is starting" : "the gateway is shutting down";
    this.rejections.note(route, 503, reason, "info");
    sendJson(res, 503, { error: reason }, { "retry-after": String(PAUSED_RETRY_AFTER_S) });
  }

  /** A handler threw: a refusal the client earned, a client that left, or a fault of ours (500). */
  private failed(req: IncomingMessage, res: ServerResponse, route: string, err: unknown): void {
    if (err instanceof HttpError) {
      this.refuse(route, res, err);
      return;
    }
    if (err instanceof ClientAbortedError) {
      this.options.logger.debug({ route, method: req.method }, err.message);
      res.destroy();
      return;
    }
    this.options.logger.error({ err, path: route }, "http handler failed");
    if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
    else res.end();
  }

  private refuse(route: string, res: ServerResponse, err: HttpError): void {
    this.rejections.note(route, err.status, err.message);
    if (res.headersSent) {
      res.end();
      return;
    }
    sendJson(res, err.status, err.body ?? { error: err.message }, err.headers);
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
