/**
 * Admin routes: health, readiness, channel status and restart, MCP server status, model usage,
 * metrics and the status page.
 * `/api/*`, `/metrics` and `/` need `Authorization: Bearer <server.admin_token>`; with no token
 * configured they answer only requests from loopback.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ChannelReport } from "../channels/registry.js";
import type { McpServerReport } from "../harness/mcp/index.js";
import type { AgentStatus } from "../harness/types.js";
import type { HttpServer } from "./http.js";
import { sendJson } from "./http.js";
import type { GatewayMetrics } from "./metrics.js";
import { renderStatusPage } from "./status-page.js";
import type { UsageFilter } from "./usage.js";

export interface AdminSource {
  reports(): ChannelReport[];
  report(name: string): ChannelReport | undefined;
  restart(name: string): Promise<ChannelReport | undefined>;
  /** State and tools of each configured MCP server; empty until the harness is up. */
  mcpReports(): McpServerReport[];
  /** The agent backend and whether it answers; `probe` checks now. Undefined until the harness is up. */
  agentStatus(probe?: boolean): Promise<AgentStatus | undefined>;
  readonly metrics: GatewayMetrics;
  readonly startedAt: number;
}

export interface AdminOptions {
  adminToken: string | undefined;
  version: string;
}

/** True for addresses of this machine's loopback interface (all of 127.0.0.0/8 and ::1). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Compares the presented token with the configured one in constant time. */
export function tokenMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

function presentedToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith("Bearer ")) return header.slice(7).trim();
  // A browser cannot send a header to the status page: it may pass ?token= instead.
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname === "/") return url.searchParams.get("token") ?? undefined;
  return undefined;
}

/** True when the request may use the admin API; otherwise it has been answered with 401/403. */
function authorize(req: IncomingMessage, res: ServerResponse, token: string | undefined): boolean {
  if (token) {
    const presented = presentedToken(req);
    if (presented !== undefined && tokenMatches(presented, token)) return true;
    sendJson(
      res,
      401,
      { error: "missing or wrong admin token: send Authorization: Bearer <server.admin_token>" },
      {
        "www-authenticate": 'Bearer realm="antler"',
      },
    );
    return false;
  }
  if (isLoopback(req.socket.remoteAddress)) return true;
  sendJson(res, 403, { error: "the admin API answers only loopback when server.admin_token is not set" });
  return false;
}

/** The usage a request asks for: one tenant's with `?tenant=NAME`, else every tenant's. */
function usageFilter(req: IncomingMessage): UsageFilter {
  const tenant = new URL(req.url ?? "/", "http://localhost").searchParams.get("tenant");
  return tenant ? { tenant } : {};
}

/** Admin routes answer while the server is paused (start-up, drain); only webhooks wait. */
const OPEN = { alwaysOpen: true };

export function mountAdmin(server: HttpServer, source: AdminSource, options: AdminOptions): void {
  const guarded =
    (handler: (req: IncomingMessage, res: ServerResponse, params: Record<string, string>) => unknown) =>
    (req: IncomingMessage, res: ServerResponse, params: Record<string, string>) =>
      authorize(req, res, options.adminToken) ? handler(req, res, params) : undefined;

  // Ready = started, not draining, and every enabled channel connected. Before the channels
  // are loaded the list is empty, so the server's own state must say "not yet".
  server.route(
    "GET",
    "/readyz",
    (_req, res) => {
      const waiting = source
        .reports()
        .filter((r) => r.enabled && !r.connected)
        .map((r) => r.name);
      const state = server.pausedFor ?? "running";
      const ready = state === "running" && waiting.length === 0;
      sendJson(res, ready ? 200 : 503, { ready, state, waiting });
    },
    OPEN,
  );
  server.route(
    "GET",
    "/api/channels",
    guarded((_req, res) => sendJson(res, 200, { channels: source.reports() })),
    OPEN,
  );
  server.route(
    "GET",
    "/api/channels/:name",
    guarded((_req, res, params) => {
      const report = source.report(params.name ?? "");
      if (report) sendJson(res, 200, report);
      else sendJson(res, 404, { error: `no channel named ${params.name}` });
    }),
    OPEN,
  );
  server.route(
    "POST",
    "/api/channels/:name/restart",
    guarded(async (_req, res, params) => {
      const report = await source.restart(params.name ?? "");
      if (report) sendJson(res, 200, report);
      else sendJson(res, 404, { error: `no channel named ${params.name}` });
    }),
    OPEN,
  );
  server.route(
    "GET",
    "/api/mcp",
    guarded((_req, res) => sendJson(res, 200, { servers: source.mcpReports() })),
    OPEN,
  );
  server.route(
    "GET",
    "/api/agent",
    guarded(async (_req, res) => {
      const status = await source.agentStatus(true);
      if (status) sendJson(res, 200, status);
      else sendJson(res, 503, { error: "the agent backend is not started yet" });
    }),
    OPEN,
  );
  server.route(
    "GET",
    "/api/usage",
    guarded((req, res) => sendJson(res, 200, source.metrics.usageLedger.snapshot(usageFilter(req)))),
    OPEN,
  );
  server.route(
    "GET",
    "/metrics",
    guarded(async (_req, res) => {
      const body = await source.metrics.registry.metrics();
      res.writeHead(200, { "content-type": source.metrics.registry.contentType });
      res.end(body);
    }),
    OPEN,
  );
  server.route(
    "GET",
    "/",
    guarded((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(renderStatusPage(source.reports(), { version: options.version, startedAt: source.startedAt }));
    }),
    OPEN,
  );
}
