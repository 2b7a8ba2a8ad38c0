/**
 * The schedule clock: on every tick, each replica looks at the due schedules of the channels it
 * runs and records each due time once, whatever the number of replicas (the store's
 * compare-and-set on the due time, with the fire's outbox entry written in the same transaction):
 * - due within `schedules.grace_ms`: fired, and its entry queued for the worker;
 * - due longer ago (the gateway was down): missed, recorded and not run;
 * - the previous fire's entry is still being delivered or run: skipped, so runs never pile up.
 * Due times missed while down collapse into one: the next due time is counted from now.
 */
import { randomUUID } from "node:crypto";
import type { NewOutboxEntry } from "../../bindings/outbox.js";
import { OUTBOX_FINAL_STATES } from "../../bindings/outbox.js";
import type { Schedule, ScheduleResult, ScheduleTiming } from "../../bindings/schedules.js";
import type { BindingStore } from "../../bindings/types.js";
import type { Logger } from "../../log/logger.js";
import type { ChannelScope } from "../scope.js";
import { type OutboxTarget, payloadJson, type RunPayload, type SendPayload } from "./payload.js";
import { byTenant } from "./worker.js";

export type NextFire = (timing: ScheduleTiming, afterMs: number) => number | undefined;

export interface ClockDeps {
  graceMs: number;
  now: () => number;
  nextFire: NextFire;
  running: () => ChannelScope[];
  logger: Logger;
  /** A fire queued an entry: the worker should look now. */
  fired: () => void;
  observer?: { scheduleFire?(result: ScheduleResult): void };
}

const DUE_BATCH = 50;

export class ScheduleClock {
  private ticking: Promise<void> | undefined;

  constructor(private readonly deps: ClockDeps) {}

  tick(): Promise<void> {
    this.ticking ??= this.fireDue()
      .catch((err: unknown) => this.deps.logger.error({ err }, "schedules: could not fire due schedules"))
      .finally(() => {
        this.ticking = undefined;
      });
    return this.ticking;
  }

  private async fireDue(): Promise<void> {
    for (const scopes of byTenant(this.deps.running())) {
      const store = (scopes[0] as ChannelScope).store;
      const now = this.deps.now();
      for (const schedule of await store.dueSchedules(
        scopes.map((s) => s.name),
        now,
        DUE_BATCH,
      )) {
        await this.fire(store, schedule, now).catch((err: unknown) =>
          this.deps.logger.error({ err, schedule: schedule.id }, "schedules: could not fire a schedule"),
        );
      }
    }
  }

  private async fire(store: BindingStore, schedule: Schedule, now: number): Promise<void> {
    const { deps } = this;
    const dueAt = schedule.nextFireAt;
    if (dueAt === undefined) return;
    let result: ScheduleResult = "fired";
    if (now - dueAt > deps.graceMs) result = "missed";
    else if (schedule.lastOutboxId) {
      const last = await store.getOutbound(schedule.lastOutboxId);
      if (last && !OUTBOX_FINAL_STATES.includes(last.state)) result = "skipped";
    }
    const nextFireAt = deps.nextFire(schedule.timing, Math.max(now, dueAt));
    const outbox = result === "fired" ? entryOf(schedule, dueAt) : undefined;
    const recorded = await store.fireSchedule(schedule.id, { dueAt, nextFireAt, result, ...(outbox ? { outbox } : {}) });
    if (!recorded) return; // another replica recorded this due time first
    deps.observer?.scheduleFire?.(result);
    const log = { schedule: schedule.id, channel: schedule.channel, dueAt: new Date(dueAt).toISOString(), result };
    if (result === "fired") {
      deps.logger.info(log, "schedule fired");
      deps.fired();
    } else
      deps.logger.warn(
        log,
        result === "missed"
          ? "schedule missed (the gateway was down past grace_ms)"
          : "schedule skipped (its last run is still going)",
      );
  }
}

/** The outbox entry of one fire: its key is the schedule and the due time, so one fire is one entry. */
export function entryOf(schedule: Schedule, dueAt: number): NewOutboxEntry {
  const target = schedule.target as unknown as OutboxTarget;
  const user = schedule.createdBy ?? { id: `antler:schedule:${schedule.id}`, name: schedule.name };
  const payload: SendPayload | RunPayload =
    schedule.action.kind === "send"
      ? { target, text: schedule.action.text }
      : {
          target,
          prompt: schedule.action.prompt,
          thread: schedule.thread,
          user,
          scheduleId: schedule.id,
          ...(schedule.agent ? { agent: schedule.agent } : {}),
        };
  return {
    id: randomUUID(),
    idempotencyKey: `schedule:${schedule.id}:${dueAt}`,
    bodyHash: "schedule",
    kind: schedule.action.kind,
    channel: schedule.channel,
    key: schedule.key,
    payload: payloadJson(payload),
    source: `schedule:${schedule.id}`,
    notBefore: dueAt,
  };
}
