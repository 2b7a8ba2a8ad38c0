/**
 * The speaker: everything Antler says without being asked in that moment. It takes requests in
 * (accept.ts), delivers the outbox (worker.ts), fires schedules (schedule-clock.ts) and answers
 * the operator's questions about both. The gateway builds one per process and ticks it; with
 * several replicas each one delivers for the channels it runs, and the store decides who holds
 * what (leases on entries, a compare-and-set on each due time).
 */
import type { OutboxEntry, OutboxFilter } from "../../bindings/outbox.js";
import type { Schedule, ScheduleResult, ScheduleUpdate } from "../../bindings/schedules.js";
import type { BindingStore } from "../../bindings/types.js";
import type { InboundMessage } from "../../channels/types.js";
import type { OutboxConfig } from "../../config/outbox.js";
import type { SchedulesConfig } from "../../config/schedules.js";
import type { Logger } from "../../log/logger.js";
import type { ChannelScope } from "../scope.js";
import { type AcceptRequest, accept } from "./accept.js";
import { type NextFire, ScheduleClock } from "./schedule-clock.js";
import { syncSchedules, TARGET_GONE_REASON } from "./schedule-sync.js";
import { type OutboxObserver, OutboxWorker } from "./worker.js";

export type { AcceptRequest, RequestTarget } from "./accept.js";
export { RefusedRequest } from "./accept.js";
export type { NextFire } from "./schedule-clock.js";
export type { OutboxObserver } from "./worker.js";

export interface SpeakerOptions {
  /** This replica's id: the owner of the entries it holds. */
  owner: string;
  outbox: OutboxConfig;
  /** `schedules:`: `grace_ms`, and the jobs synced at start. */
  schedules: Pick<SchedulesConfig, "grace_ms" | "jobs">;
  callTimeoutMs: number;
  logger: Logger;
  nextFire: NextFire;
  /** Every configured channel's scope, running here or not. */
  scopes: () => ChannelScope[];
  /** Whether a channel runs on this replica now. */
  runsHere: (scope: ChannelScope) => boolean;
  submit: (scope: ChannelScope, msg: InboundMessage) => Promise<void>;
  hasAgent: (tenant: string, agent: string) => boolean;
  /** The store's view of every tenant. */
  views: () => BindingStore[];
  observer?: OutboxObserver & { scheduleFire?(result: ScheduleResult): void };
  /** The clock (tests move it). */
  now?: () => number;
}

/** A schedule with the tenant it belongs to and its last fire's delivery, for the operator. */
export interface ScheduleReport extends Schedule {
  tenant: string;
  lastDelivery?: { state: OutboxEntry["state"]; error?: string };
}

/** How long finished inbox events are kept (for dedupe of late redeliveries). */
const INBOX_KEEP_MS = 48 * 3600_000;

export class Speaker {
  readonly worker: OutboxWorker;
  readonly clock: ScheduleClock;
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: SpeakerOptions) {
    this.now = options.now ?? Date.now;
    const running = () => options.scopes().filter((s) => options.runsHere(s));
    this.worker = new OutboxWorker({
      owner: options.owner,
      settings: options.outbox,
      callTimeoutMs: options.callTimeoutMs,
      logger: options.logger,
      now: this.now,
      running,
      submit: options.submit,
      targetGone: async (store, id, reason) => {
        await store.updateSchedule(id, { state: "disabled", reason: `${TARGET_GONE_REASON}: ${reason}` });
        options.logger.warn({ schedule: id, reason }, "schedule disabled: its target cannot be reached");
      },
      ...(options.observer ? { observer: options.observer } : {}),
    });
    this.clock = new ScheduleClock({
      graceMs: options.schedules.grace_ms,
      now: this.now,
      nextFire: options.nextFire,
      running,
      logger: options.logger,
      fired: () => void this.worker.tick(),
      ...(options.observer ? { observer: options.observer } : {}),
    });
  }

  /**
   * Brings the stored schedules in line with the config (`channels`: the config's channel
   * sections), then looks for work every `outbox.poll_ms`, and prunes the outbox and the inbox
   * hourly (the gateway's one housekeeping timer).
   */
  async start(channels: Record<string, { enabled: boolean }>): Promise<void> {
    const { outbox } = this.options;
    const scopes = this.options.scopes();
    const views = this.options.views();
    await syncSchedules({
      jobs: this.options.schedules.jobs,
      channels: new Set(Object.entries(channels).flatMap(([name, s]) => (s.enabled ? [name] : []))),
      viewOf: (channel) => scopes.find((s) => s.name === channel)?.store ?? (views[0] as BindingStore),
      views,
      owner: this.options.owner,
      now: this.now(),
      nextFire: this.options.nextFire,
      logger: this.options.logger,
    }).catch((err: unknown) => this.options.logger.error({ err }, "schedules: could not bring them in line with the config"));
    this.timer = setInterval(() => void this.tick(), outbox.poll_ms);
    this.timer.unref();
    this.pruneTimer = setInterval(() => void this.prune(), 3600_000);
    this.pruneTimer.unref();
    void this.tick();
  }

  /** One look: due schedules fired, then waiting entries claimed. */
  async tick(): Promise<void> {
    await this.clock.tick();
    await this.worker.tick();
  }

  stop(): void {
    clearInterval(this.timer);
    clearInterval(this.pruneTimer);
    this.worker.stop();
  }

  /** Takes a request in (see accept.ts); the worker starts on it at once. */
  accept(request: AcceptRequest, idempotencyKey: string): Promise<{ entry: OutboxEntry; replayed: boolean }> {
    const { options } = this;
    return accept(
      {
        scopeOf: (name) => options.scopes().find((s) => s.name === name),
        runsHere: (name) => options.scopes().some((s) => s.name === name && options.runsHere(s)),
        hasAgent: options.hasAgent,
        nudge: () => void this.worker.tick(),
      },
      request,
      idempotencyKey,
    );
  }

  /** An entry by id, from the tenants `tenant` may see (all when undefined). */
  async outbound(id: string, tenant?: string): Promise<(OutboxEntry & { tenant: string }) | undefined> {
    for (const view of this.viewsOf(tenant)) {
      const entry = await view.getOutbound(id);
      if (entry) return { ...entry, tenant: view.tenant };
    }
    return undefined;
  }

  async listOutbound(filter: OutboxFilter, tenant?: string): Promise<(OutboxEntry & { tenant: string })[]> {
    const lists = await Promise.all(
      this.viewsOf(tenant).map(async (v) => (await v.listOutbound(filter)).map((e) => ({ ...e, tenant: v.tenant }))),
    );
    return lists
      .flat()
      .sort((a, b) => b.createdAt - a.createdAt)
      .slice(0, filter.limit ?? 100);
  }

  async schedules(tenant?: string): Promise<ScheduleReport[]> {
    const out: ScheduleReport[] = [];
    for (const view of this.viewsOf(tenant)) {
      for (const s of await view.listSchedules()) {
        const last = s.lastOutboxId ? await view.getOutbound(s.lastOutboxId) : undefined;
        const lastDelivery = last && { state: last.state, ...(last.error ? { error: last.error } : {}) };
        out.push({ ...s, tenant: view.tenant, ...(lastDelivery ? { lastDelivery } : {}) });
      }
    }
    return out;
  }

  async schedule(id: string, tenant?: string): Promise<ScheduleReport | undefined> {
    return (await this.schedules(tenant)).find((s) => s.id === id);
  }

  /** Pauses, resumes (from the next due time after now) or deletes a schedule; undefined when there is none. */
  async changeSchedule(id: string, change: "pause" | "resume" | "delete", tenant?: string): Promise<Schedule | undefined> {
    for (const view of this.viewsOf(tenant)) {
      const schedule = await view.getSchedule(id);
      if (!schedule) continue;
      if (change === "delete") return (await view.deleteSchedule(id)) ? schedule : undefined;
      const update: ScheduleUpdate =
        change === "pause"
          ? { state: "paused" }
          : { state: "active", reason: null, nextFireAt: this.options.nextFire(schedule.timing, this.now()) ?? null };
      if (change === "resume" && update.nextFireAt === null) update.state = "done";
      return view.updateSchedule(id, update);
    }
    return undefined;
  }

  private viewsOf(tenant: string | undefined): BindingStore[] {
    return this.options.views().filter((v) => tenant === undefined || v.tenant === tenant);
  }

  /** Housekeeping, hourly: finished outbox entries after `outbox.keep_hours`, finished inbox events after 48 hours. */
  private async prune(): Promise<void> {
    const now = this.now();
    for (const view of this.options.views()) {
      await view.pruneOutbox(now - this.options.outbox.keep_hours * 3600_000).catch(() => 0);
      await view.pruneInbox(now - INBOX_KEEP_MS).catch(() => 0);
    }
  }
}
