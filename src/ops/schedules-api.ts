/**
 * The schedules on the admin API: `GET /api/schedules` (every schedule the caller may see, with
 * its next fire and its last result), `GET /api/schedules/:id`, and `POST .../pause`, `POST
 * .../resume` and `DELETE /api/schedules/:id`. A tenant's token sees and changes only its own.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Schedule } from "../bindings/schedules.js";
import type { ScheduleReport } from "../core/outbox/index.js";
import { HttpError } from "../server/body.js";
import { sendJson } from "../server/http.js";
import type { Caller } from "./admin-caller.js";
import { type AdminContext, type Call, speakerOf } from "./admin-context.js";

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** How a schedule looks to the operator. */
export function scheduleView(s: Schedule & Partial<Pick<ScheduleReport, "tenant" | "lastDelivery">>) {
  return {
    id: s.id,
    name: s.name,
    origin: s.origin,
    ...(s.tenant ? { tenant: s.tenant } : {}),
    channel: s.channel,
    conversation: s.key,
    timing: s.timing,
    action: s.action,
    ...(s.agent ? { agent: s.agent } : {}),
    thread: s.thread,
    state: s.state,
    ...(s.reason ? { reason: s.reason } : {}),
    next_fire_at: iso(s.nextFireAt),
    last_fire_at: iso(s.lastFireAt),
    last_result: s.lastResult ?? null,
    ...(s.lastDelivery ? { last_delivery: s.lastDelivery } : {}),
    fires: s.fires,
    missed: s.missed,
    skipped: s.skipped,
    ...(s.createdBy ? { created_by: s.createdBy } : {}),
  };
}

async function list(admin: AdminContext, _req: IncomingMessage, res: ServerResponse, { caller }: Call<Caller>) {
  sendJson(res, 200, { schedules: (await speakerOf(admin).schedules(caller.tenant)).map(scheduleView) });
}

async function show(admin: AdminContext, _req: IncomingMessage, res: ServerResponse, { params, caller }: Call<Caller>) {
  const found = await speakerOf(admin).schedule(params.id ?? "", caller.tenant);
  if (!found) throw new HttpError(404, `no schedule with id ${params.id}`);
  sendJson(res, 200, scheduleView(found));
}

function change(what: "pause" | "resume" | "delete") {
  return async (admin: AdminContext, _req: IncomingMessage, res: ServerResponse, { params, caller }: Call<Caller>) => {
    const changed = await speakerOf(admin).changeSchedule(params.id ?? "", what, caller.tenant);
    if (!changed) throw new HttpError(404, `no schedule with id ${params.id}`);
    sendJson(res, 200, what === "delete" ? { deleted: changed.id } : scheduleView(changed));
  };
}

export const SCHEDULE_ROUTES = [
  { method: "GET", path: "/api/schedules", handler: list },
  { method: "GET", path: "/api/schedules/:id", handler: show },
  { method: "POST", path: "/api/schedules/:id/pause", handler: change("pause") },
  { method: "POST", path: "/api/schedules/:id/resume", handler: change("resume") },
  { method: "DELETE", path: "/api/schedules/:id", handler: change("delete") },
] as const;
