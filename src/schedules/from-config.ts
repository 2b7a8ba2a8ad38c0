/**
 * The operator's jobs (`schedules.jobs` in config.yaml) as schedules, and the book's limits from
 * the section. The shapes are written out here, not imported, because this room does not read
 * config: the caller hands over the parsed section. Where a job posts is the core's to encode.
 */

import type { NewSchedule, ScheduleTiming } from "../bindings/schedules.js";
import type { Json } from "../storage/json.js";
import type { ScheduleLimits } from "./book.js";
import { nextFireAfter, parseLocalTime } from "./timing.js";

/** One parsed `schedules.jobs.<name>` entry (the config schema has checked it). */
export interface JobSettings {
  cron?: string;
  at?: string;
  tz: string;
  channel: string;
  message?: string;
  prompt?: string;
  agent?: string;
  thread: "fresh" | "conversation";
  enabled: boolean;
}

/** The id of the config job `name`. */
export const configScheduleId = (name: string) => `cfg:${name}`;

/** The timing of a job; `at` is read on the clock of its `tz`. */
export function jobTiming(job: Pick<JobSettings, "cron" | "at" | "tz">): ScheduleTiming {
  if (job.cron !== undefined) return { cron: job.cron, tz: job.tz };
  return { at: parseLocalTime(job.at ?? "", job.tz), tz: job.tz };
}

/**
 * The schedule a config job stands for, to `putSchedule` at start (the store keeps its counters
 * and last fire). `target` and `key` are the core's encoding of the job's target; `after` is the
 * time the next fire is counted from (now, or a stored due time to keep a fire missed while
 * down). A disabled job is stored `paused`; a one-shot whose time has passed has no next fire.
 */
export function configSchedule(name: string, job: JobSettings, where: { target: Json; key: string; after: number }): NewSchedule {
  const timing = jobTiming(job);
  const nextFireAt = nextFireAfter(timing, where.after);
  return {
    id: configScheduleId(name),
    origin: "config",
    name,
    channel: job.channel,
    key: where.key,
    target: where.target,
    timing,
    action: job.prompt !== undefined ? { kind: "run", prompt: job.prompt } : { kind: "send", text: job.message ?? "" },
    ...(job.agent !== undefined ? { agent: job.agent } : {}),
    thread: job.thread,
    state: !job.enabled ? "paused" : nextFireAt === undefined ? "done" : "active",
    ...(nextFireAt !== undefined ? { nextFireAt } : {}),
  };
}

/** The limits when no `schedules:` section is given (its defaults). */
export const DEFAULT_SCHEDULE_LIMITS: ScheduleLimits = { perConversation: 10, perTenant: 500, minIntervalS: 60 };

/** The limits `ScheduleBook` keeps, from the `schedules:` section. */
export function scheduleLimits(section: {
  max_per_conversation: number;
  max_per_tenant: number;
  min_interval_s: number;
}): ScheduleLimits {
  return {
    perConversation: section.max_per_conversation,
    perTenant: section.max_per_tenant,
    minIntervalS: section.min_interval_s,
  };
}
