/**
 * `antler schedules`: a running gateway's schedules as a terminal table (`list`, the default),
 * and `pause`, `resume` or `delete` of one by id, through the admin API.
 */
import { textTable } from "./status-table.js";

/** One schedule as `GET /api/schedules` shows it (schedules-api.ts). */
export interface ScheduleRow {
  id: string;
  name: string;
  origin: string;
  tenant?: string;
  channel: string;
  timing: { cron: string; tz: string } | { at: number; tz: string };
  state: string;
  reason?: string;
  next_fire_at: string | null;
  last_result: string | null;
  last_delivery?: { state: string; error?: string };
  fires: number;
  missed: number;
  skipped: number;
}

function when(iso: string | null): string {
  return iso ? iso.replace("T", " ").slice(0, 19) : "-";
}

export function formatSchedules(rows: ScheduleRow[]): string {
  if (rows.length === 0) return "No schedules.\n";
  const header = ["ID", "NAME", "CHANNEL", "WHEN", "STATE", "NEXT (UTC)", "LAST", "FIRED/MISSED/SKIPPED", "PROBLEM"];
  const body = rows.map((s) => [
    s.id,
    s.name.length > 32 ? `${s.name.slice(0, 31)}…` : s.name,
    s.channel,
    "cron" in s.timing ? `${s.timing.cron} ${s.timing.tz}` : `once ${s.timing.tz}`,
    s.state,
    s.state === "active" ? when(s.next_fire_at) : "-",
    s.last_result ? `${s.last_result}${s.last_delivery ? `/${s.last_delivery.state}` : ""}` : "-",
    `${s.fires}/${s.missed}/${s.skipped}`,
    s.reason ?? s.last_delivery?.error ?? "",
  ]);
  return textTable(header, body);
}

export type ScheduleAction = "list" | "pause" | "resume" | "delete";

/** The admin API call for an action: method and path. */
export function scheduleCall(action: ScheduleAction, id: string | undefined): { method: string; path: string } {
  if (action === "list") return { method: "GET", path: "/api/schedules" };
  if (!id) throw new Error(`antler schedules ${action} needs the schedule's id (see antler schedules)`);
  const path = `/api/schedules/${encodeURIComponent(id)}`;
  return action === "delete" ? { method: "DELETE", path } : { method: "POST", path: `${path}/${action}` };
}
