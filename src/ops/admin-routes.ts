/**
 * The admin routes, one handler each, and the table `mountAdmin` walks. A route's `auth` says
 * who may call it: `admin` routes answer 401/403 to anyone but the admin or a tenant's admin
 * (src/ops/admin-caller.ts), and see only what their caller may; `open` routes answer anyone.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ChannelReport } from "../channels/registry.js";
import type { ReplicaInfo } from "../replicas/coordinator.js";
import { sendJson } from "../server/http.js";
import { type Caller, sees } from "./admin-caller.js";
import type { AdminContext, AdminRoute, Handler } from "./admin-context.js";
import { readiness } from "./readiness.js";
import { SCHEDULE_ROUTES } from "./schedules-api.js";
import { SEND_ROUTES } from "./send-api.js";
import { renderStatusPage } from "./status-page.js";
import type { PageSpeaker } from "./status-schedules.js";
import type { UsageFilter } from "./usage.js";

/** The schedules and the unsent outbox entries a caller may see, for the status page. */
async function pageSpeaker(admin: AdminContext, caller: Caller): Promise<PageSpeaker | undefined> {
  const speaker = admin.source.speaker;
  if (!speaker) return undefined;
  const recent = await speaker.listOutbound({ limit: 200 }, caller.tenant);
  const unsent = recent.filter((e) => e.state !== "sent").slice(0, 20);
  return { schedules: await speaker.schedules(caller.tenant), unsent };
}

/** The channel reports a caller may see. */
function reportsFor(admin: AdminContext, caller: Caller): ChannelReport[] {
  return admin.source.reports().filter((r) => sees(caller, admin.source.tenantOf(r.name)));
}

/** The live replicas; which one runs which channel spans tenants, so a tenant's token sees only its channels' leaders. */
async function replicasFor(admin: AdminContext, caller: Caller): Promise<ReplicaInfo[]> {
  const { source } = admin;
  return (await source.replicas()).map((r) => ({ ...r, leads: r.leads.filter((name) => sees(caller, source.tenantOf(name))) }));
}

/** A channel the caller may see, or a 404 already sent. */
function visible(admin: AdminContext, res: ServerResponse, name: string, caller: Caller): boolean {
  if (admin.source.report(name) && sees(caller, admin.source.tenantOf(name))) return true;
  sendJson(res, 404, { error: `no channel named ${name}` });
  return false;
}

/** The usage a request asks for: one tenant's with `?tenant=NAME`, else every tenant's; a tenant's caller sees only its own. */
function usageFilter(req: IncomingMessage, caller: Caller): UsageFilter | undefined {
  const asked = new URL(req.url ?? "/", "http://localhost").searchParams.get("tenant") ?? undefined;
  if (caller.tenant === undefined) return asked ? { tenant: asked } : {};
  return asked === undefined || asked === caller.tenant ? { tenant: caller.tenant } : undefined;
}

/** `GET /readyz`: 200 when the gateway can handle messages, else 503 with the reasons (readiness.ts). */
const readyz: Handler<Caller | undefined> = async (admin, _req, res, { caller }) => {
  const reports = admin.source.reports();
  const state = admin.server.pausedFor ?? "running";
  const status = await admin.probedAgent();
  const body = readiness(reports, state, status, caller !== undefined && caller.tenant === undefined);
  sendJson(res, body.ready ? 200 : 503, body);
};

const channels: Handler<Caller> = (admin, _req, res, { caller }) => sendJson(res, 200, { channels: reportsFor(admin, caller) });

const channel: Handler<Caller> = (admin, _req, res, { params, caller }) => {
  const name = params.name ?? "";
  if (visible(admin, res, name, caller)) sendJson(res, 200, admin.source.report(name));
};

const restart: Handler<Caller> = async (admin, _req, res, { params, caller }) => {
  const name = params.name ?? "";
  if (!visible(admin, res, name, caller)) return;
  const report = await admin.source.restart(name);
  if (report) sendJson(res, 200, report);
  else sendJson(res, 404, { error: `no channel named ${name}` });
};

const replicas: Handler<Caller> = async (admin, _req, res, { caller }) =>
  sendJson(res, 200, { replicas: await replicasFor(admin, caller) });

const mcp: Handler<Caller> = (admin, _req, res, { caller }) =>
  sendJson(res, 200, { servers: admin.source.mcpReports().filter((r) => sees(caller, r.tenant)) });

const agent: Handler<Caller> = async (admin, _req, res, { caller }) => {
  const agents = (await admin.source.agentStatuses(true)).filter((a) => sees(caller, a.tenant));
  // The server's caller gets the default agent's fields at the top, as before tenants.
  const main = caller.tenant === undefined ? await admin.source.agentStatus() : agents[0];
  if (main) sendJson(res, 200, { ...main, agents });
  else sendJson(res, 503, { error: "the agent backend is not started yet" });
};

const usage: Handler<Caller> = (admin, req, res, { caller }) => {
  const filter = usageFilter(req, caller);
  if (filter) sendJson(res, 200, admin.source.metrics.usageLedger.snapshot(filter));
  else sendJson(res, 403, { error: "a tenant's admin token reads only that tenant's usage" });
};

const metrics: Handler<Caller> = async (admin, _req, res, { caller }) => {
  if (caller.tenant !== undefined) {
    return sendJson(res, 403, { error: "/metrics spans every tenant: use server.admin_token (a tenant reads /api/usage)" });
  }
  const { registry } = admin.source.metrics;
  const body = await registry.metrics();
  res.writeHead(200, { "content-type": registry.contentType });
  res.end(body);
};

const statusPage: Handler<Caller> = async (admin, _req, res, { caller }) => {
  const agents = (await admin.probedAgents()).filter((a) => sees(caller, a.tenant));
  const shown = await replicasFor(admin, caller).catch(() => []);
  const { version } = admin.options;
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  const speaker = await pageSpeaker(admin, caller).catch(() => undefined);
  const page = { version, startedAt: admin.source.startedAt, agents, replicas: shown, ...(speaker ? { speaker } : {}) };
  res.end(renderStatusPage(reportsFor(admin, caller), page));
};

/** Every admin route, in the order they are mounted. */
export const ADMIN_ROUTES: readonly AdminRoute[] = [
  { method: "GET", path: "/readyz", auth: "open", handler: readyz },
  { method: "GET", path: "/api/channels", auth: "admin", handler: channels },
  { method: "GET", path: "/api/channels/:name", auth: "admin", handler: channel },
  { method: "POST", path: "/api/channels/:name/restart", auth: "admin", handler: restart },
  { method: "GET", path: "/api/replicas", auth: "admin", handler: replicas },
  { method: "GET", path: "/api/mcp", auth: "admin", handler: mcp },
  { method: "GET", path: "/api/agent", auth: "admin", handler: agent },
  { method: "GET", path: "/api/usage", auth: "admin", handler: usage },
  ...SEND_ROUTES.map((r): AdminRoute => ({ ...r, auth: "admin" })),
  ...SCHEDULE_ROUTES.map((r): AdminRoute => ({ ...r, auth: "admin" })),
  { method: "GET", path: "/metrics", auth: "admin", handler: metrics },
  { method: "GET", path: "/", auth: "admin", handler: statusPage },
];
