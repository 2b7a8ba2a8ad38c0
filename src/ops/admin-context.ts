/**
 * What an admin route's handler works with (the gateway's answers, the server, the reused agent
 * probes) and the shape of a route in the table `mountAdmin` walks.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Speaker } from "../core/outbox/index.js";
import type { AgentStatus } from "../harness/types.js";
import { HttpError } from "../server/body.js";
import type { HttpServer, RouteParams } from "../server/http.js";
import type { Caller } from "./admin-caller.js";
import type { AdminOptions, AdminSource, TenantAgentStatus } from "./admin-source.js";

/** What every handler works with: the gateway's answers, the server, and the reused agent probes. */
export interface AdminContext {
  server: HttpServer;
  source: AdminSource;
  options: AdminOptions;
  /** The default agent's status, probed at most every few seconds (readiness.ts). */
  probedAgent: () => Promise<AgentStatus | undefined>;
  /** Every agent's status, probed likewise. */
  probedAgents: () => Promise<TenantAgentStatus[]>;
}

/** One request to a route: its path parameters and who it speaks for. */
export interface Call<C> {
  params: RouteParams;
  caller: C;
}

export type Handler<C> = (admin: AdminContext, req: IncomingMessage, res: ServerResponse, call: Call<C>) => unknown;

/** One admin route: `open` handlers learn the caller (if any) but answer anyone. */
export type AdminRoute = { method: "GET" | "POST" | "DELETE"; path: string } & (
  | { auth: "admin"; handler: Handler<Caller> }
  | { auth: "open"; handler: Handler<Caller | undefined> }
);

/** The gateway's speaker (outbox and schedules), or a 503 while the gateway is still starting. */
export function speakerOf(admin: AdminContext): Speaker {
  const speaker = admin.source.speaker;
  if (!speaker) throw new HttpError(503, "the gateway is starting; try again shortly", undefined, { "retry-after": "1" });
  return speaker;
}
