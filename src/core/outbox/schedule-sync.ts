/**
 * The schedules as the config says at start: each job of `schedules.jobs` stored as `cfg:<name>`
 * (its next due time kept when its timing did not change, so a fire missed while the gateway was
 * down is judged by `grace_ms`; an operator's pause kept), jobs gone from the config deleted, and
 * every schedule whose channel is no longer configured disabled with the reason (and enabled
 * again when the channel comes back). Outbox entries of a removed channel fail with that reason,
 * so nothing waits for a channel that will never run.
 */
import type { Schedule } from "../../bindings/schedules.js";
import type { BindingStore } from "../../bindings/types.js";
import type { ScheduleJobConfig } from "../../config/schedules.js";
import type { Logger } from "../../log/logger.js";
import { configSchedule, configScheduleId, jobTiming } from "../../schedules/from-config.js";
import { type OutboxTarget, provisionalKey } from "./payload.js";
import type { NextFire } from "./schedule-clock.js";

export interface SyncOptions {
  jobs: Record<string, ScheduleJobConfig>;
  /** Channels enabled in the config. */
  channels: Set<string>;
  viewOf: (channel: string) => BindingStore;
  views: BindingStore[];
  owner: string;
  now: number;
  nextFire: NextFire;
  logger: Logger;
}

/** How a schedule disabled for an unreachable target says so (the worker writes it, see index.ts). */
export const TARGET_GONE_REASON = "its target cannot be reached";

function sameTarget(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const GONE = (channel: string) => `channel ${channel} is not in the config (or not enabled)`;

export async function syncSchedules(o: SyncOptions): Promise<void> {
  for (const [name, job] of Object.entries(o.jobs)) await putJob(o, name, job);
  for (const view of o.views) {
    for (const s of await view.listSchedules()) {
      if (s.origin === "config" && !Object.keys(o.jobs).some((n) => configScheduleId(n) === s.id)) {
        await view.deleteSchedule(s.id);
        o.logger.info({ schedule: s.id }, "schedule removed: its job is gone from the config");
      } else await followChannel(o, view, s);
    }
    await failOrphans(o, view);
  }
}

async function putJob(o: SyncOptions, name: string, job: ScheduleJobConfig): Promise<void> {
  const view = o.viewOf(job.channel);
  const spec = job.target;
  const target: OutboxTarget = "key" in spec ? { key: spec.key } : { spec };
  const key = "key" in spec ? spec.key : provisionalKey(job.channel, spec);
  const existing = await view.getSchedule(configScheduleId(name));
  const schedule = configSchedule(name, job, { target: target as never, key, after: o.now });
  const sameTiming = existing !== undefined && JSON.stringify(existing.timing) === JSON.stringify(jobTiming(job));
  if (schedule.state === "active" && existing) {
    if (existing.state === "paused") schedule.state = "paused";
    else if (sameTiming && existing.state === "active" && existing.nextFireAt !== undefined)
      schedule.nextFireAt = existing.nextFireAt;
    else if (sameTiming && existing.state === "done") {
      schedule.state = "done";
      delete schedule.nextFireAt;
    } else if (
      existing.state === "disabled" &&
      existing.reason?.startsWith(TARGET_GONE_REASON) &&
      sameTarget(existing.target, target)
    ) {
      // Its target could not be reached; a restart alone does not change that, a new target in the config does.
      schedule.state = "disabled";
      schedule.reason = existing.reason;
      delete schedule.nextFireAt;
    }
  }
  if (!o.channels.has(job.channel)) {
    schedule.state = "disabled";
    schedule.reason = GONE(job.channel);
  }
  await view.putSchedule(schedule);
}

/** A schedule of a channel that left the config is disabled; one whose channel came back is enabled again. */
async function followChannel(o: SyncOptions, view: BindingStore, s: Schedule): Promise<void> {
  const configured = o.channels.has(s.channel);
  if (!configured && (s.state === "active" || s.state === "paused")) {
    await view.updateSchedule(s.id, { state: "disabled", reason: GONE(s.channel) });
    o.logger.warn({ schedule: s.id, channel: s.channel }, "schedule disabled: its channel is not in the config");
  } else if (configured && s.state === "disabled" && s.reason === GONE(s.channel)) {
    const nextFireAt = o.nextFire(s.timing, o.now);
    await view.updateSchedule(s.id, {
      state: nextFireAt === undefined ? "done" : "active",
      reason: null,
      nextFireAt: nextFireAt ?? null,
    });
  }
}

/**
 * Entries waiting for a channel that is no longer configured fail with the reason, those waiting
 * for a retry too: they are claimed as of the latest retry time among them. A claim hands out
 * the oldest entry of each conversation only, so it is repeated until none is left.
 */
async function failOrphans(o: SyncOptions, view: BindingStore): Promise<void> {
  // Waiting, and left in flight by a process that died (their lease lapses; the claim waits for that).
  const lists = await Promise.all(
    (["queued", "sending", "running"] as const).map((state) => view.listOutbound({ state, limit: 1000 })),
  );
  const waiting = lists.flat().filter((e) => !o.channels.has(e.channel));
  if (waiting.length === 0) return;
  const gone = [...new Set(waiting.map((e) => e.channel))];
  const at = Math.max(o.now, ...waiting.map((e) => (e.state === "queued" ? e.nextAttemptAt : (e.leaseUntil ?? 0) + 1)));
  for (let round = 0; round < waiting.length; round++) {
    const claimed = await view.claimOutbound(o.owner, gone, at, 60_000, 1000);
    if (claimed.length === 0) return;
    for (const entry of claimed) {
      await view.updateOutbound(entry.id, o.owner, { state: "failed", error: GONE(entry.channel), errorCode: "channel_removed" });
    }
  }
}
