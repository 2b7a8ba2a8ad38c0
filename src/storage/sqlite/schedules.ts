/**
 * Schedules on SQLite (see src/bindings/schedules.ts), on top of the outbox. A fire is a
 * compare-and-set on the schedule's due time and the fire's outbox entry, in one IMMEDIATE
 * transaction: a second fire of the same due time finds the time moved and writes nothing.
 */

import type { OutboxEntry } from "../../bindings/outbox.js";
import {
  RESULT_COUNTER,
  SCHEDULE_COLUMNS,
  SCHEDULE_PUT_COLUMNS,
  type ScheduleRecord,
  scheduleAssignments,
  scheduleOf,
  scheduleValues,
} from "../../bindings/rows-schedules.js";
import type { NewSchedule, Schedule, ScheduleFilter, ScheduleFire, ScheduleUpdate } from "../../bindings/schedules.js";
import type { Json } from "../../bindings/types.js";
import { SqliteOutboxStore } from "./outbox.js";

/** A schedule row as SQLite returns it: JSON as text. */
type ScheduleRow = Omit<ScheduleRecord, "target" | "timing" | "action" | "created_by"> & {
  target: string;
  timing: string;
  action: string;
  created_by: string | null;
};

/** Fields `putSchedule` replaces on an existing row (the rest: counters, last fire, creation, are kept). */
const REPLACED = SCHEDULE_PUT_COLUMNS.filter((c) => c !== "id")
  .map((c) => `${c} = excluded.${c}`)
  .join(", ");

/** One tenant's schedules and outbox; the rest of the store builds on it. */
export abstract class SqliteScheduleStore extends SqliteOutboxStore {
  private scheduleRow(id: string): Schedule | undefined {
    const row = this.sql(`SELECT ${SCHEDULE_COLUMNS} FROM antler_schedules WHERE tenant = ? AND id = ?`).get(this.tenant, id) as
      | ScheduleRow
      | undefined;
    return row && toSchedule(row);
  }

  async putSchedule(schedule: NewSchedule): Promise<Schedule> {
    const at = this.conn.now();
    const placeholders = SCHEDULE_PUT_COLUMNS.map(() => "?").join(", ");
    const row = this.sql(
      `INSERT INTO antler_schedules (tenant, seq, ${SCHEDULE_PUT_COLUMNS.join(", ")}, created_at, updated_at)
         VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM antler_schedules), ${placeholders}, ?, ?)
         ON CONFLICT (tenant, id) DO UPDATE SET ${REPLACED}, updated_at = excluded.updated_at
         RETURNING ${SCHEDULE_COLUMNS}`,
    ).get(this.tenant, ...scheduleValues(schedule), at, at) as ScheduleRow;
    return toSchedule(row);
  }

  async getSchedule(id: string): Promise<Schedule | undefined> {
    return this.scheduleRow(id);
  }

  async listSchedules(filter: ScheduleFilter = {}): Promise<Schedule[]> {
    const rows = this.sql(
      `SELECT ${SCHEDULE_COLUMNS} FROM antler_schedules WHERE tenant = @tenant AND (@channel IS NULL OR channel = @channel)
         AND (@key IS NULL OR key = @key) AND (@state IS NULL OR state = @state) ORDER BY created_at, seq`,
    ).all({
      tenant: this.tenant,
      channel: filter.channel ?? null,
      key: filter.key ?? null,
      state: filter.state ?? null,
    }) as ScheduleRow[];
    return rows.map(toSchedule);
  }

  async updateSchedule(id: string, update: ScheduleUpdate): Promise<Schedule | undefined> {
    const set = [...scheduleAssignments(update), ["updated_at", this.conn.now()] as const];
    const row = this.sql(
      `UPDATE antler_schedules SET ${set.map(([column]) => `${column} = ?`).join(", ")}
         WHERE tenant = ? AND id = ? RETURNING ${SCHEDULE_COLUMNS}`,
    ).get(...set.map(([, value]) => value), this.tenant, id) as ScheduleRow | undefined;
    return row && toSchedule(row);
  }

  async deleteSchedule(id: string): Promise<boolean> {
    return this.sql("DELETE FROM antler_schedules WHERE tenant = ? AND id = ?").run(this.tenant, id).changes === 1;
  }

  async dueSchedules(channels: string[], now: number, limit: number): Promise<Schedule[]> {
    const rows = this.sql(
      `SELECT ${SCHEDULE_COLUMNS} FROM antler_schedules WHERE tenant = ? AND state = 'active' AND next_fire_at <= ?
         AND channel IN (SELECT value FROM json_each(?)) ORDER BY next_fire_at, seq LIMIT ?`,
    ).all(this.tenant, now, JSON.stringify(channels), limit) as ScheduleRow[];
    return rows.map(toSchedule);
  }

  async fireSchedule(id: string, fire: ScheduleFire): Promise<{ schedule: Schedule; outbox?: OutboxEntry } | undefined> {
    const counter = RESULT_COUNTER[fire.result];
    return this.transaction(() => {
      const moved = this.sql(
        `UPDATE antler_schedules SET next_fire_at = @next, state = CASE WHEN @next IS NULL THEN 'done' ELSE state END,
           ${counter} = ${counter} + 1, last_fire_at = @due, last_result = @result, updated_at = @at
           WHERE tenant = @tenant AND id = @id AND state = 'active' AND next_fire_at = @due`,
      ).run({
        next: fire.nextFireAt ?? null,
        due: fire.dueAt,
        result: fire.result,
        at: this.conn.now(),
        tenant: this.tenant,
        id,
      });
      if (moved.changes !== 1) return undefined;
      let outbox: OutboxEntry | undefined;
      if (fire.result === "fired" && fire.outbox) {
        outbox = this.enqueue(fire.outbox).entry;
        this.sql("UPDATE antler_schedules SET last_outbox_id = ? WHERE tenant = ? AND id = ?").run(outbox.id, this.tenant, id);
      }
      const schedule = this.scheduleRow(id) as Schedule;
      return outbox ? { schedule, outbox } : { schedule };
    });
  }
}

function toSchedule(row: ScheduleRow): Schedule {
  return scheduleOf({
    ...row,
    target: JSON.parse(row.target) as Json,
    timing: JSON.parse(row.timing) as Schedule["timing"],
    action: JSON.parse(row.action) as Schedule["action"],
    created_by: row.created_by === null ? null : (JSON.parse(row.created_by) as NonNullable<Schedule["createdBy"]>),
  });
}
