/**
 * Schedules: messages and agent prompts that fire on a cron or once at a time, per tenant. The
 * store keeps each schedule's next due time and fires it with a compare-and-set on that time,
 * writing the fire's outbox entry in the same transaction: however many replicas look at a due
 * schedule at once, one fire is recorded per due time and one entry is queued for it.
 */
import type { Json } from "../storage/json.js";
import type { NewOutboxEntry, OutboxEntry } from "./outbox.js";

/** What a fire does: post `text` as written, or run the agent on `prompt`. */
export type ScheduleAction = { kind: "send"; text: string } | { kind: "run"; prompt: string };

/** How it fires: a cron expression in a time zone, or once at a time. */
export type ScheduleTiming = { cron: string; tz: string } | { at: number; tz: string };

/** `active`; `paused` by an operator; `disabled` by Antler (why in `reason`); `done`: a one-shot that fired. */
export type ScheduleState = "active" | "paused" | "disabled" | "done";

/** The outcome of the last due time. */
export type ScheduleResult =
  /** An outbox entry was queued (its state tells the delivery). */
  | "fired"
  /** Found due after `grace_ms` had passed (downtime): not run. */
  | "missed"
  /** The previous fire's run was still going. */
  | "skipped";

export interface Schedule {
  /** Stable id: `cfg:<name>` for config schedules, else a short random id. */
  id: string;
  /** `config` (from `schedules:` in config), `agent` (made by the agent's tool) or `api`. */
  origin: "config" | "agent" | "api";
  /** Name shown to people (the config key, or a short description). */
  name: string;
  channel: string;
  /** Conversation key of the target (or a stand-in until resolved). */
  key: string;
  /** The target as the core encodes it (ref, key or spec); opaque here. */
  target: Json;
  timing: ScheduleTiming;
  action: ScheduleAction;
  /** Agent to run (for `run`); absent = the conversation's. */
  agent?: string;
  /** `fresh`: a new thread each fire; `conversation`: the conversation's own thread. */
  thread: "fresh" | "conversation";
  /** The user who made it (agent- or user-made schedules), so only the conversation's people see it. */
  createdBy?: { id: string; name?: string };
  state: ScheduleState;
  /** Why it is disabled. */
  reason?: string;
  /** Next due time (ms); absent when it will not fire again. */
  nextFireAt?: number;
  lastFireAt?: number;
  lastResult?: ScheduleResult;
  /** Outbox id of the last fire. */
  lastOutboxId?: string;
  /** Fires recorded so far, and due times missed or skipped. */
  fires: number;
  missed: number;
  skipped: number;
  createdAt: number;
  updatedAt: number;
}

/** A new schedule; counters and times are set by the store. */
export type NewSchedule = Omit<
  Schedule,
  "fires" | "missed" | "skipped" | "createdAt" | "updatedAt" | "lastFireAt" | "lastResult" | "lastOutboxId"
>;

export interface ScheduleFilter {
  channel?: string;
  key?: string;
  state?: ScheduleState;
}

/** Fields `updateSchedule` may change; undefined leaves one as it is, null clears it. */
export interface ScheduleUpdate {
  state?: ScheduleState;
  reason?: string | null;
  nextFireAt?: number | null;
  name?: string;
  channel?: string;
  key?: string;
  target?: Json;
  timing?: ScheduleTiming;
  action?: ScheduleAction;
  agent?: string | null;
  thread?: "fresh" | "conversation";
}

/** One due time's outcome, recorded by {@link Schedules.fireSchedule}. */
export interface ScheduleFire {
  /** The due time the caller saw: the fire happens only if the schedule still has it. */
  dueAt: number;
  /** The next due time after this one; undefined when none (the schedule becomes `done`). */
  nextFireAt: number | undefined;
  result: ScheduleResult;
  /** For `fired`: the outbox entry to queue, in the same transaction. */
  outbox?: NewOutboxEntry;
}

export interface Schedules {
  /** Stores a schedule, replacing one with the same id (counters and last fire are kept). */
  putSchedule(schedule: NewSchedule): Promise<Schedule>;
  getSchedule(id: string): Promise<Schedule | undefined>;
  /** Oldest first. */
  listSchedules(filter?: ScheduleFilter): Promise<Schedule[]>;
  /** Undefined when there is no such schedule. */
  updateSchedule(id: string, update: ScheduleUpdate): Promise<Schedule | undefined>;
  /** False when there was none. */
  deleteSchedule(id: string): Promise<boolean>;
  /** `active` schedules of `channels` with `nextFireAt <= now`, earliest first. */
  dueSchedules(channels: string[], now: number, limit: number): Promise<Schedule[]>;
  /**
   * Records one due time, atomically: only if the schedule is `active` and its `nextFireAt` is
   * still `fire.dueAt`, it moves to `fire.nextFireAt` (or becomes `done`), the counter of
   * `fire.result` grows, and for `fired` the outbox entry is enqueued (idempotently, by its key)
   * and becomes `lastOutboxId`. Undefined when another replica recorded that due time first (or
   * the schedule changed); then nothing is written.
   */
  fireSchedule(id: string, fire: ScheduleFire): Promise<{ schedule: Schedule; outbox?: OutboxEntry } | undefined>;
}
