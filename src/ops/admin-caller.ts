/**
 * Who an admin request speaks for: the whole server (`server.admin_token`, or loopback when no
 * token is set), one tenant (that tenant's `admin_token`), or no one. Every token is compared in
 * constant time (src/server/auth.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AppConfig } from "../config/schema.js";
import { isLoopback, tokenMatches } from "../server/auth.js";
import { sendJson } from "../server/http.js";

/** The tokens the admin routes accept. */
export interface AdminTokens {
  adminToken: string | undefined;
  /** Each tenant's admin token, by tenant; tenants without one are absent. */
  tenantTokens?: Record<string, string>;
}

/** The tokens a config sets: `server.admin_token` (empty means none) and each tenant's `admin_token`. */
export function adminTokens(config: Pick<AppConfig, "server" | "tenants">): AdminTokens {
  const tenantTokens = Object.fromEntries(
    Object.entries(config.tenants).flatMap(([tenant, t]) => (t.admin_token ? [[tenant, t.admin_token]] : [])),
  );
  return { adminToken: config.server.admin_token || undefined, tenantTokens };
}

/** Who a request speaks for: the whole server, or one tenant. */
export type Caller = { tenant: undefined } | { tenant: string };

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
export function callerOf(req: IncomingMessage, tokens: AdminTokens): Caller | undefined {
  const token = tokens.adminToken;
  const presented = presentedToken(req);
  const tenant = tenantOfToken(presented, tokens.tenantTokens ?? {});
  if (tenant !== undefined) return { tenant };
  if (token) return presented !== undefined && tokenMatches(presented, token) ? { tenant: undefined } : undefined;
  return isLoopback(req.socket.remoteAddress) ? { tenant: undefined } : undefined;
}

/** Who may use the admin API with this request; undefined when it has been answered with 401/403. */
export function authorize(req: IncomingMessage, res: ServerResponse, tokens: AdminTokens): Caller | undefined {
  const caller = callerOf(req, tokens);
  if (caller) return caller;
  if (tokens.adminToken) {
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

/** Whether the caller may see this tenant's things. */
export function sees(caller: Caller, tenant: string): boolean {
  return caller.tenant === undefined || caller.tenant === tenant;
}
