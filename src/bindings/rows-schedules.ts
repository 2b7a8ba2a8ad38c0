/**
 * The schedules table's rows as both stores hand them out (see rows.ts for the pattern): each
 * store decodes its own column types into `ScheduleRecord`, and `scheduleOf` maps it to the
 * contract once. `scheduleValues` and `scheduleAssignments` encode what goes in.
 */
import { type Assignment, jsonValue } from "./rows-outbox.js";
import type {
  NewSchedule,
  Schedule,
  ScheduleAction,
  ScheduleResult,
  ScheduleState,
  ScheduleTiming,
  ScheduleUpdate,
} from "./schedules.js";
import type { Json } from "./types.js";

export interface ScheduleRecord {
  id: string;
  origin: Schedule["origin"];
  name: string;
  channel: string;
  key: string;
  target: Json;
  timing: ScheduleTiming;
  action: ScheduleAction;
  agent: string | null;
  thread: Schedule["thread"];
  created_by: NonNullable<Schedule["createdBy"]> | null;
  state: ScheduleState;
  reason: string | null;
  next_fire_at: number | null;
  last_fire_at: number | null;
  last_result: ScheduleResult | null;
  last_outbox_id: string | null;
  fires: number;
  missed: number;
  skipped: number;
  created_at: number;
  updated_at: number;
}

/** The columns `putSchedule` writes, in the order of `scheduleValues`. */
export const SCHEDULE_PUT_COLUMNS = [
  "id",
  "origin",
  "name",
  "channel",
  "key",
  "target",
  "timing",
  "action",
  "agent",
  "thread",
  "created_by",
  "state",
  "reason",
  "next_fire_at",
] as const;

export const SCHEDULE_COLUMNS = `${SCHEDULE_PUT_COLUMNS.join(", ")}, last_fire_at, last_result, last_outbox_id, fires, missed, skipped, created_at, updated_at`;

/** A new schedule's values for `SCHEDULE_PUT_COLUMNS`, JSON encoded as text. */
export function scheduleValues(s: NewSchedule): Array<string | number | null> {
  return [
    s.id,
    s.origin,
    s.name,
    s.channel,
    s.key,
    jsonValue(s.target) ?? "null",
    JSON.stringify(s.timing),
    JSON.stringify(s.action),
    s.agent ?? null,
    s.thread,
    jsonValue(s.createdBy),
    s.state,
    s.reason ?? null,
    s.nextFireAt ?? null,
  ];
}

/** The columns an update sets (without `updated_at`, which the store adds). */
export function scheduleAssignments(update: ScheduleUpdate): Assignment[] {
  const set: Assignment[] = [];
  const plain = [
    ["state", update.state],
    ["reason", update.reason],
    ["next_fire_at", update.nextFireAt],
    ["name", update.name],
    ["channel", update.channel],
    ["key", update.key],
    ["agent", update.agent],
    ["thread", update.thread],
  ] as const;
  for (const [column, value] of plain) if (value !== undefined) set.push([column, value]);
  if (update.target !== undefined) set.push(["target", jsonValue(update.target) ?? "null"]);
  if (update.timing !== undefined) set.push(["timing", JSON.stringify(update.timing)]);
  if (update.action !== undefined) set.push(["action", JSON.stringify(update.action)]);
  return set;
}

export function scheduleOf(row: ScheduleRecord): Schedule {
  return {
    id: row.id,
    origin: row.origin,
    name: row.name,
    channel: row.channel,
    key: row.key,
    target: row.target,
    timing: row.timing,
    action: row.action,
    ...(row.agent !== null ? { agent: row.agent } : {}),
    thread: row.thread,
    ...(row.created_by !== null ? { createdBy: row.created_by } : {}),
    state: row.state,
    ...(row.reason !== null ? { reason: row.reason } : {}),
    ...(row.next_fire_at !== null ? { nextFireAt: row.next_fire_at } : {}),
    ...(row.last_fire_at !== null ? { lastFireAt: row.last_fire_at } : {}),
    ...(row.last_result !== null ? { lastResult: row.last_result } : {}),
    ...(row.last_outbox_id !== null ? { lastOutboxId: row.last_outbox_id } : {}),
    fires: row.fires,
    missed: row.missed,
    skipped: row.skipped,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The counter column a fire's result grows. */
export const RESULT_COUNTER: Record<ScheduleResult, "fires" | "missed" | "skipped"> = {
  fired: "fires",
  missed: "missed",
  skipped: "skipped",
};
