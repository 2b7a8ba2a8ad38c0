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
 *
 * This module mounts the routes; what the gateway hands in is in admin-source.ts, the caller
 * check in admin-caller.ts, the handlers and their table in admin-routes.ts, readiness in
 * readiness.ts.
 */
import type { HttpServer } from "../server/http.js";
import { authorize, callerOf } from "./admin-caller.js";
import type { AdminContext } from "./admin-context.js";
import { ADMIN_ROUTES } from "./admin-routes.js";
import type { AdminOptions, AdminSource } from "./admin-source.js";
import { PROBE_REUSE_MS, reused } from "./readiness.js";

/** Admin routes answer while the server is paused (start-up, drain); only webhooks wait. */
const OPEN = { alwaysOpen: true };

/** Mounts every route of the table (admin-routes.ts), each behind the check its `auth` names. */
export function mountAdmin(server: HttpServer, source: AdminSource, options: AdminOptions): void {
  const admin: AdminContext = {
    server,
    source,
    options,
    probedAgent: reused(
      () => source.agentStatus(true),
      PROBE_REUSE_MS,
      (status) => status !== undefined,
    ),
    probedAgents: reused(
      () => source.agentStatuses(true),
      PROBE_REUSE_MS,
      (list) => list.length > 0,
    ),
  };
  for (const route of ADMIN_ROUTES) {
    server.route(
      route.method,
      route.path,
      (req, res, params) => {
        if (route.auth === "open") return route.handler(admin, req, res, { params, caller: callerOf(req, options) });
        const caller = authorize(req, res, options);
        return caller ? route.handler(admin, req, res, { params, caller }) : undefined;
      },
      OPEN,
    );
  }
}
