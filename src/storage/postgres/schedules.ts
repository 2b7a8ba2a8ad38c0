/**
 * Schedules on PostgreSQL (see src/bindings/schedules.ts), on top of the outbox. A fire is one
 * transaction: an `UPDATE … WHERE next_fire_at = <the due time seen>` (a compare-and-set: of
 * replicas firing one due time at once, the first takes the row lock and moves the time; the
 * others, reading the row again once it commits, find it moved and match nothing), then the
 * fire's outbox entry and the schedule's `last_outbox_id`.
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
import { PostgresOutboxStore } from "./outbox.js";

/** A schedule row as pg returns it: bigint columns as strings, json decoded. */
type ScheduleRow = Omit<ScheduleRecord, "next_fire_at" | "last_fire_at" | "created_at" | "updated_at"> & {
  next_fire_at: string | null;
  last_fire_at: string | null;
  created_at: string;
  updated_at: string;
};

/** Fields `putSchedule` replaces on an existing row (the rest: counters, last fire, creation, are kept). */
const REPLACED = SCHEDULE_PUT_COLUMNS.filter((c) => c !== "id")
  .map((c) => `${c} = excluded.${c}`)
  .join(", ");

/** One tenant's schedules and outbox; the rest of the store builds on it. */
export abstract class PostgresScheduleStore extends PostgresOutboxStore {
  async putSchedule(schedule: NewSchedule): Promise<Schedule> {
    const values = scheduleValues(schedule);
    const at = values.length + 2;
    const [row] = await this.rows<ScheduleRow>(
      `INSERT INTO antler_schedules (tenant, ${SCHEDULE_PUT_COLUMNS.join(", ")}, created_at, updated_at)
         VALUES ($1, ${values.map((_, i) => `$${i + 2}`).join(", ")}, $${at}, $${at})
         ON CONFLICT (tenant, id) DO UPDATE SET ${REPLACED}, updated_at = excluded.updated_at
         RETURNING ${SCHEDULE_COLUMNS}`,
      [this.tenant, ...values, this.shared.now()],
    );
    return toSchedule(row as ScheduleRow);
  }

  async getSchedule(id: string): Promise<Schedule | undefined> {
    const [row] = await this.rows<ScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM antler_schedules WHERE tenant = $1 AND id = $2`, [
      this.tenant,
      id,
    ]);
    return row && toSchedule(row);
  }

  async listSchedules(filter: ScheduleFilter = {}): Promise<Schedule[]> {
    const rows = await this.rows<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM antler_schedules WHERE tenant = $1 AND ($2::text IS NULL OR channel = $2)
         AND ($3::text IS NULL OR key = $3) AND ($4::text IS NULL OR state = $4) ORDER BY created_at, seq`,
      [this.tenant, filter.channel ?? null, filter.key ?? null, filter.state ?? null],
    );
    return rows.map(toSchedule);
  }

  async updateSchedule(id: string, update: ScheduleUpdate): Promise<Schedule | undefined> {
    const set = [...scheduleAssignments(update), ["updated_at", this.shared.now()] as const];
    const [row] = await this.rows<ScheduleRow>(
      `UPDATE antler_schedules SET ${set.map(([column], i) => `${column} = $${i + 1}`).join(", ")}
         WHERE tenant = $${set.length + 1} AND id = $${set.length + 2} RETURNING ${SCHEDULE_COLUMNS}`,
      [...set.map(([, value]) => value), this.tenant, id],
    );
    return row && toSchedule(row);
  }

  async deleteSchedule(id: string): Promise<boolean> {
    const result = await this.pool().query("DELETE FROM antler_schedules WHERE tenant = $1 AND id = $2", [this.tenant, id]);
    return result.rowCount === 1;
  }

  async dueSchedules(channels: string[], now: number, limit: number): Promise<Schedule[]> {
    const rows = await this.rows<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM antler_schedules WHERE tenant = $1 AND state = 'active' AND next_fire_at <= $2
         AND channel = ANY($3::text[]) ORDER BY next_fire_at, seq LIMIT $4`,
      [this.tenant, now, channels, limit],
    );
    return rows.map(toSchedule);
  }

  async fireSchedule(id: string, fire: ScheduleFire): Promise<{ schedule: Schedule; outbox?: OutboxEntry } | undefined> {
    const counter = RESULT_COUNTER[fire.result];
    return this.transaction(async (client) => {
      const [moved] = await this.rows<ScheduleRow>(
        `UPDATE antler_schedules SET next_fire_at = $1, state = CASE WHEN $2 THEN 'done' ELSE state END,
           ${counter} = ${counter} + 1, last_fire_at = $3, last_result = $4, updated_at = $5
           WHERE tenant = $6 AND id = $7 AND state = 'active' AND next_fire_at = $3
           RETURNING ${SCHEDULE_COLUMNS}`,
        [fire.nextFireAt ?? null, fire.nextFireAt === undefined, fire.dueAt, fire.result, this.shared.now(), this.tenant, id],
        client,
      );
      if (!moved) return undefined;
      if (fire.result !== "fired" || !fire.outbox) return { schedule: toSchedule(moved) };
      const { entry } = await this.enqueue(client, fire.outbox);
      const [row] = await this.rows<ScheduleRow>(
        `UPDATE antler_schedules SET last_outbox_id = $1 WHERE tenant = $2 AND id = $3 RETURNING ${SCHEDULE_COLUMNS}`,
        [entry.id, this.tenant, id],
        client,
      );
      return { schedule: toSchedule(row as ScheduleRow), outbox: entry };
    });
  }
}

const orNull = (value: string | null): number | null => (value === null ? null : Number(value));

function toSchedule(row: ScheduleRow): Schedule {
  return scheduleOf({
    ...row,
    next_fire_at: orNull(row.next_fire_at),
    last_fire_at: orNull(row.last_fire_at),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  });
}
