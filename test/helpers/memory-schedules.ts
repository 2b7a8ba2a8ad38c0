/**
 * A `Schedules` kept in a Map, for tests of the schedule room: put, get, list, update and delete
 * behave as the contract says; the clock's methods (due, fire) are the stores' and throw here.
 */
import type { NewSchedule, Schedule, ScheduleFilter, Schedules, ScheduleUpdate } from "../../src/bindings/schedules.js";

export class MemorySchedules implements Schedules {
  readonly rows = new Map<string, Schedule>();
  constructor(private readonly clock: () => number = Date.now) {}

  async putSchedule(schedule: NewSchedule): Promise<Schedule> {
    const old = this.rows.get(schedule.id);
    const now = this.clock();
    const row: Schedule = {
      ...schedule,
      fires: old?.fires ?? 0,
      missed: old?.missed ?? 0,
      skipped: old?.skipped ?? 0,
      createdAt: old?.createdAt ?? now,
      updatedAt: now,
      ...(old?.lastFireAt !== undefined ? { lastFireAt: old.lastFireAt } : {}),
      ...(old?.lastResult !== undefined ? { lastResult: old.lastResult } : {}),
      ...(old?.lastOutboxId !== undefined ? { lastOutboxId: old.lastOutboxId } : {}),
    };
    // Map order stands in for "oldest first"; a replaced row keeps its place.
    this.rows.set(schedule.id, row);
    return structuredClone(row);
  }

  async getSchedule(id: string): Promise<Schedule | undefined> {
    const row = this.rows.get(id);
    return row && structuredClone(row);
  }

  async listSchedules(filter: ScheduleFilter = {}): Promise<Schedule[]> {
    return [...this.rows.values()]
      .filter(
        (s) =>
          (filter.channel === undefined || s.channel === filter.channel) && (filter.key === undefined || s.key === filter.key),
      )
      .filter((s) => filter.state === undefined || s.state === filter.state)
      .map((s) => structuredClone(s));
  }

  async updateSchedule(id: string, update: ScheduleUpdate): Promise<Schedule | undefined> {
    const row = this.rows.get(id);
    if (!row) return undefined;
    const next: Record<string, unknown> = { ...row };
    for (const [field, value] of Object.entries(update)) {
      if (value === undefined) continue;
      if (value === null) delete next[field];
      else next[field] = value;
    }
    next.updatedAt = this.clock();
    this.rows.set(id, next as unknown as Schedule);
    return structuredClone(next as unknown as Schedule);
  }

  async deleteSchedule(id: string): Promise<boolean> {
    return this.rows.delete(id);
  }

  async dueSchedules(): Promise<Schedule[]> {
    throw new Error("MemorySchedules: dueSchedules is the stores' to implement");
  }

  async fireSchedule(): Promise<never> {
    throw new Error("MemorySchedules: fireSchedule is the stores' to implement");
  }
}
