/**
 * Admin routes: health, readiness, channel status and restart, MCP server status, model usage,
 * metrics and the status page.
 * `/api/*`, `/metrics` and `/` need `Authorization: Bearer <server.admin_token>`; with no token
 * configured they answer only requests from loopback.
 *
 * A tenant's `admin_token` opens the same routes limited to that tenant: its channels (another
 * tenant's answer 404, as if they did not exist), its MCP clients, its agents and its usage.
 * `/metrics` spans every tenant, so a tenant token gets 403 there.
 *
 * `/readyz` and the page probe the agent (its model endpoint or its server); those answers are
 * reused for a few seconds, so a page refreshing itself or a busy readiness check does not
 * hammer the endpoint.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ChannelReport } from "../channels/registry.js";
import type { McpServerReport } from "../harness/mcp/index.js";
import type { AgentStatus } from "../harness/types.js";
import type { ReplicaInfo } from "../replicas/coordinator.js";
import { isLoopback, tokenMatches } from "../server/auth.js";
import type { HttpServer } from "../server/http.js";
import { sendJson } from "../server/http.js";
import type { GatewayMetrics } from "./metrics.js";
import { renderStatusPage } from "./status-page.js";
import type { UsageFilter } from "./usage.js";

export interface AdminSource {
  reports(): ChannelReport[];
  report(name: string): ChannelReport | undefined;
  restart(name: string): Promise<ChannelReport | undefined>;
  /** State and tools of each tenant's MCP servers; empty until the agents are up. */
  mcpReports(): (McpServerReport & { tenant: string })[];
  /** The default agent's backend and whether it answers; `probe` checks now. Undefined until the agents are up. */
  agentStatus(probe?: boolean): Promise<AgentStatus | undefined>;
  /** Every agent instance (tenant × agent) with its status. */
  agentStatuses(probe?: boolean): Promise<TenantAgentStatus[]>;
  /** The tenant a channel belongs to. */
  tenantOf(channel: string): string;
  /** The live gateway replicas sharing the store (just this one on SQLite), with the channels each leads. */
  replicas(): Promise<ReplicaInfo[]>;
  readonly metrics: GatewayMetrics;
  readonly startedAt: number;
}

export type TenantAgentStatus = AgentStatus & { tenant: string; agent: string };

export interface AdminOptions {
  adminToken: string | undefined;
  /** Each tenant's admin token, by tenant; tenants without one are absent. */
  tenantTokens?: Record<string, string>;
  version: string;
}

/** Who a request speaks for: the whole server, or one tenant. */
type Caller = { tenant: undefined } | { tenant: string };

function presentedToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith("Bearer ")) return header.slice(7).trim();
  // A browser cannot send a header to the status page: it may pass ?token= instead.
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname === "/") return url.searchParams.get("token") ?? undefined;
  return undefined;
}

/** The tenant whose admin token was presented, if any (every token is compared, in constant time each). */
function tenantOfToken(presented: string | undefined, tokens: Record<string, string>): string | undefined {
  if (presented === undefined) return undefined;
  let found: string | undefined;
  for (const [tenant, token] of Object.entries(tokens)) if (tokenMatches(presented, token)) found = tenant;
  return found;
}

/** Who the request speaks for, if anyone; answers nothing. */
function callerOf(req: IncomingMessage, options: AdminOptions): Caller | undefined {
  const token = options.adminToken;
  const presented = presentedToken(req);
  const tenant = tenantOfToken(presented, options.tenantTokens ?? {});
  if (tenant !== undefined) return { tenant };
  if (token) return presented !== undefined && tokenMatches(presented, token) ? { tenant: undefined } : undefined;
  return isLoopback(req.socket.remoteAddress) ? { tenant: undefined } : undefined;
}

/** Who may use the admin API with this request; undefined when it has been answered with 401/403. */
function authorize(req: IncomingMessage, res: ServerResponse, options: AdminOptions): Caller | undefined {
  const caller = callerOf(req, options);
  if (caller) return caller;
  if (options.adminToken) {
    sendJson(
      res,
      401,
      { error: "missing or wrong admin token: send Authorization: Bearer <server.admin_token>" },
      {
        "www-authenticate": 'Bearer realm="antler"',
      },
    );
    return undefined;
  }
  sendJson(res, 403, { error: "the admin API answers only loopback when server.admin_token is not set" });
  return undefined;
}

/** The usage a request asks for: one tenant's with `?tenant=NAME`, else every tenant's; a tenant's caller sees only its own. */
function usageFilter(req: IncomingMessage, caller: Caller): UsageFilter | undefined {
  const asked = new URL(req.url ?? "/", "http://localhost").searchParams.get("tenant") ?? undefined;
  if (caller.tenant === undefined) return asked ? { tenant: asked } : {};
  return asked === undefined || asked === caller.tenant ? { tenant: caller.tenant } : undefined;
}

/** Whether the caller may see this tenant's things. */
function sees(caller: Caller, tenant: string): boolean {
  return caller.tenant === undefined || caller.tenant === tenant;
}

/** Admin routes answer while the server is paused (start-up, drain); only webhooks wait. */
const OPEN = { alwaysOpen: true };

/** How long `/readyz` and the page reuse a probe of the agents. */
const PROBE_REUSE_MS = 10_000;

/**
 * `load`'s answer, reused: the first call waits for it; later calls get the last answer at once
 * and, once it is `ms` old, start one fresh `load` in the background. A readiness check must
 * answer fast (orchestrators give it a second or so), while a probe may take seconds. An answer
 * `keep` refuses (the agents not built yet) is not reused.
 */
function reused<T>(load: () => Promise<T>, ms: number, keep: (value: T) => boolean): () => Promise<T> {
  let answer: { value: T; at: number } | undefined;
  let loading: Promise<T> | undefined;
  const refresh = (): Promise<T> => {
    loading ??= load()
      .then((value) => {
        if (keep(value)) answer = { value, at: Date.now() };
        return value;
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };
  return () => {
    if (!answer) return refresh();
    if (Date.now() - answer.at >= ms) refresh().catch(() => undefined);
    return Promise.resolve(answer.value);
  };
}

/** What /readyz says of the default agent: what it is, whether it can answer, and why not. */
export interface ReadyAgent {
  backend: AgentStatus["backend"];
  target: string;
  reachable: boolean;
  /** The problem when it cannot answer, else null. */
  problem: string | null;
}

/** A URL's place in a text shown to anyone who can reach the port. */
function withoutUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s)]+/gi, "<url>");
}

/** The problem in words that name no host, address or URL, for callers who are not the admin. */
function publicProblem(status: AgentStatus): string {
  const refused = /rejected (the|our) API key|refused our credentials/i.test(status.last_error?.message ?? "");
  const what = status.backend === "remote" ? "agent server" : "model endpoint";
  return `the ${what} ${refused ? "rejected the API key" : "cannot be reached"} (details: GET /api/agent with the admin token)`;
}

/** The default agent for /readyz; only a caller of the admin API reads the URL and the cause. */
function readyAgent(status: AgentStatus, admin: boolean): ReadyAgent {
  const full = status.last_error?.message ?? `the ${status.backend} agent (${status.target}) cannot be reached`;
  const problem = status.reachable ? null : admin ? full : publicProblem(status);
  return {
    backend: status.backend,
    target: admin ? status.target : withoutUrls(status.target),
    reachable: status.reachable,
    problem,
  };
}

export function mountAdmin(server: HttpServer, source: AdminSource, options: AdminOptions): void {
  type Handler = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, caller: Caller) => unknown;
  const guarded = (handler: Handler) => (req: IncomingMessage, res: ServerResponse, params: Record<string, string>) => {
    const caller = authorize(req, res, options);
    return caller ? handler(req, res, params, caller) : undefined;
  };
  /** The channel reports a caller may see. */
  const reports = (caller: Caller) => source.reports().filter((r) => sees(caller, source.tenantOf(r.name)));
  /** The live replicas; which one runs which channel spans tenants, so a tenant's token sees only its channels' leaders. */
  const replicas = async (caller: Caller) =>
    (await source.replicas()).map((r) => ({ ...r, leads: r.leads.filter((name) => sees(caller, source.tenantOf(name))) }));
  /** A channel the caller may see, or a 404 already sent. */
  const visible = (res: ServerResponse, name: string, caller: Caller): boolean => {
    if (source.report(name) && sees(caller, source.tenantOf(name))) return true;
    sendJson(res, 404, { error: `no channel named ${name}` });
    return false;
  };

  const probedAgent = reused(
    () => source.agentStatus(true),
    PROBE_REUSE_MS,
    (status) => status !== undefined,
  );
  const probedAgents = reused(
    () => source.agentStatuses(true),
    PROBE_REUSE_MS,
    (list) => list.length > 0,
  );

  // Ready = started, not draining, every enabled channel connected, and the default agent's
  // model (or server) answering. Before the channels are loaded the list is empty, so the
  // server's own state must say "not yet".
  server.route(
    "GET",
    "/readyz",
    async (req, res) => {
      const waiting = source
        .reports()
        .filter((r) => r.enabled && !r.connected && r.state !== "standby")
        .map((r) => r.name);
      const state = server.pausedFor ?? "running";
      const status = await probedAgent();
      const caller = callerOf(req, options);
      const admin = caller !== undefined && caller.tenant === undefined;
      const agent = status ? readyAgent(status, admin) : null;
      const problems = [
        ...(state === "running" ? [] : [`the gateway is ${state}`]),
        ...waiting.map((name) => `channel ${name} is not connected`),
        ...(agent?.problem ? [agent.problem] : []),
      ];
      const ready = problems.length === 0;
      sendJson(res, ready ? 200 : 503, { ready, state, waiting, agent, problems });
    },
    OPEN,
  );
  server.route(
    "GET",
    "/api/channels",
    guarded((_req, res, _params, caller) => sendJson(res, 200, { channels: reports(caller) })),
    OPEN,
  );
  server.route(
    "GET",
    "/api/channels/:name",
    guarded((_req, res, params, caller) => {
      const name = params.name ?? "";
      if (visible(res, name, caller)) sendJson(res, 200, source.report(name));
    }),
    OPEN,
  );
  server.route(
    "POST",
    "/api/channels/:name/restart",
    guarded(async (_req, res, params, caller) => {
      const name = params.name ?? "";
      if (!visible(res, name, caller)) return;
      const report = await source.restart(name);
      if (report) sendJson(res, 200, report);
      else sendJson(res, 404, { error: `no channel named ${name}` });
    }),
    OPEN,
  );
  server.route(
    "GET",
    "/api/replicas",
    guarded(async (_req, res, _params, caller) => sendJson(res, 200, { replicas: await replicas(caller) })),
    OPEN,
  );
  server.route(
    "GET",
    "/api/mcp",
    guarded((_req, res, _params, caller) =>
      sendJson(res, 200, { servers: source.mcpReports().filter((r) => sees(caller, r.tenant)) }),
    ),
    OPEN,
  );
  server.route(
    "GET",
    "/api/agent",
    guarded(async (_req, res, _params, caller) => {
      const agents = (await source.agentStatuses(true)).filter((a) => sees(caller, a.tenant));
      // The server's caller gets the default agent's fields at the top, as before tenants.
      const main = caller.tenant === undefined ? await source.agentStatus() : agents[0];
      if (main) sendJson(res, 200, { ...main, agents });
      else sendJson(res, 503, { error: "the agent backend is not started yet" });
    }),
    OPEN,
  );
  server.route(
    "GET",
    "/api/usage",
    guarded((req, res, _params, caller) => {
      const filter = usageFilter(req, caller);
      if (filter) sendJson(res, 200, source.metrics.usageLedger.snapshot(filter));
      else sendJson(res, 403, { error: "a tenant's admin token reads only that tenant's usage" });
    }),
    OPEN,
  );
  server.route(
    "GET",
    "/metrics",
    guarded(async (_req, res, _params, caller) => {
      if (caller.tenant !== undefined) {
        return sendJson(res, 403, { error: "/metrics spans every tenant: use server.admin_token (a tenant reads /api/usage)" });
      }
      const body = await source.metrics.registry.metrics();
      res.writeHead(200, { "content-type": source.metrics.registry.contentType });
      res.end(body);
    }),
    OPEN,
  );
  server.route(
    "GET",
    "/",
    guarded(async (_req, res, _params, caller) => {
      const agents = (await probedAgents()).filter((a) => sees(caller, a.tenant));
      const shown = await replicas(caller).catch(() => []);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        renderStatusPage(reports(caller), { version: options.version, startedAt: source.startedAt, agents, replicas: shown }),
      );
    }),
    OPEN,
  );
}
