/**
 * One tenant's schedules as a conversation sees them: what the agent tools and the `/schedules`
 * command create, list and cancel. A conversation sees only its own schedules; config schedules
 * are shown but belong to the operator. The limits of `schedules:` are kept here.
 */
import { randomBytes } from "node:crypto";
import type { Schedule, ScheduleAction, Schedules, ScheduleTiming } from "../bindings/schedules.js";
import { ScheduleError } from "./errors.js";
import { checkTiming, nextFireAfter, shortestGap } from "./timing.js";

/** The limits of `schedules:` that bind people and agents (config jobs are exempt). */
export interface ScheduleLimits {
  /** Schedules one conversation may have that can still fire. */
  perConversation: number;
  /** Schedules one tenant may have that can still fire. */
  perTenant: number;
  /** Shortest gap between two fires of a cron, in seconds. */
  minIntervalS: number;
}

export interface ScheduleBookOptions {
  /** The tenant's store. */
  store: Schedules;
  limits: ScheduleLimits;
  /** Now, in ms. */
  clock?: () => number;
  /** A new schedule id; default 8 random base32 characters. */
  newId?: () => string;
}

/** The conversation a schedule is made from, and fires into. */
export interface ScheduleConversation {
  /** Channel instance name. */
  channel: string;
  /** Conversation key (it starts with the channel's name, so it is unique in the tenant). */
  key: string;
}

export interface ScheduleRequest {
  conversation: ScheduleConversation;
  /** Who asks (the person behind the turn). */
  user?: { id: string; name?: string };
  timing: ScheduleTiming;
  action: ScheduleAction;
  /** Agent for `run`; absent = the conversation's own. */
  agent?: string;
  thread?: "fresh" | "conversation";
  /** Shown to people; default: what it does, shortened. */
  name?: string;
  /** `agent` (the schedule tools, the default) or `api`. */
  origin?: "agent" | "api";
}

/** What `cancel` did: the schedule removed, or why nothing was. */
export type CancelOutcome =
  | { ok: true; schedule: Schedule; by?: { id: string; name?: string } }
  | { ok: false; code: "schedule_not_found" | "schedule_forbidden"; reason: string; schedule?: Schedule };

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/** 8 characters of base32 (40 random bits): short enough to type, unlikely to repeat in a tenant. */
export function randomScheduleId(): string {
  return [...randomBytes(8)].map((b) => BASE32[b & 31]).join("");
}

/** Longest default name, in characters. */
const NAME_MAX = 48;

/** A schedule that may still fire (`done` one-shots no longer count, and are not listed). */
const live = (s: Schedule) => s.state !== "done";

export class ScheduleBook {
  private readonly store: Schedules;
  private readonly limits: ScheduleLimits;
  private readonly clock: () => number;
  private readonly newId: () => string;

  constructor(options: ScheduleBookOptions) {
    this.store = options.store;
    this.limits = options.limits;
    this.clock = options.clock ?? Date.now;
    this.newId = options.newId ?? randomScheduleId;
  }

  /**
   * Makes a schedule for the conversation, which it fires into (target `{ key }`). Throws a
   * {@link ScheduleError}: `schedule_invalid` for a bad timing or an empty action,
   * `schedule_limit` when a limit would be passed.
   */
  async create(request: ScheduleRequest): Promise<Schedule> {
    const now = this.clock();
    const { timing, action, conversation } = request;
    checkAction(action);
    checkTiming(timing, now);
    this.checkInterval(timing, now);
    await this.checkCounts(conversation.key);
    const nextFireAt = nextFireAfter(timing, now);
    if (nextFireAt === undefined) throw new ScheduleError("schedule_invalid", "this timing never fires after now");
    return this.store.putSchedule({
      id: await this.freshId(),
      origin: request.origin ?? "agent",
      name: request.name?.trim() || defaultName(action),
      channel: conversation.channel,
      key: conversation.key,
      target: { key: conversation.key },
      timing,
      action,
      ...(request.agent ? { agent: request.agent } : {}),
      thread: request.thread ?? "conversation",
      ...(request.user ? { createdBy: request.user } : {}),
      state: "active",
      nextFireAt,
    });
  }

  /** The conversation's schedules that can still fire (config ones aimed at it too), oldest first. */
  async list(conversationKey: string): Promise<Schedule[]> {
    return (await this.store.listSchedules({ key: conversationKey })).filter(live);
  }

  /**
   * Removes one of the conversation's schedules, by id or by its number in {@link list} (1 is
   * the first). Anyone in the conversation may; a config schedule is refused (it belongs to the
   * operator, who removes it from config.yaml), and so is another conversation's (as not found,
   * so ids of other conversations are not confirmed).
   */
  async cancel(conversationKey: string, idOrIndex: string | number, by?: { id: string; name?: string }): Promise<CancelOutcome> {
    const mine = await this.list(conversationKey);
    const found = pick(mine, idOrIndex);
    if (!found) {
      const shown = typeof idOrIndex === "number" ? `number ${idOrIndex}` : `\`${idOrIndex}\``;
      return { ok: false, code: "schedule_not_found", reason: `no schedule ${shown} in this conversation` };
    }
    if (found.origin === "config") {
      return {
        ok: false,
        code: "schedule_forbidden",
        schedule: found,
        reason: `\`${found.id}\` comes from the gateway's config: only its operator can remove it (schedules.jobs in config.yaml)`,
      };
    }
    await this.store.deleteSchedule(found.id);
    return { ok: true, schedule: found, ...(by ? { by } : {}) };
  }

  /** Cron schedules may not fire more often than `minIntervalS`. */
  private checkInterval(timing: ScheduleTiming, now: number): void {
    const gap = shortestGap(timing, now);
    const min = this.limits.minIntervalS * 1000;
    if (gap !== undefined && gap < min) {
      throw new ScheduleError(
        "schedule_limit",
        `\`${"cron" in timing ? timing.cron : ""}\` fires every ${seconds(gap)}; the shortest interval allowed is ${seconds(min)}`,
      );
    }
  }

  private async checkCounts(key: string): Promise<void> {
    const all = (await this.store.listSchedules()).filter((s) => live(s) && s.origin !== "config");
    const here = all.filter((s) => s.key === key).length;
    if (here >= this.limits.perConversation) {
      throw new ScheduleError(
        "schedule_limit",
        `this conversation already has ${here} schedules (the most allowed is ${this.limits.perConversation}): cancel one first`,
      );
    }
    if (all.length >= this.limits.perTenant) {
      throw new ScheduleError(
        "schedule_limit",
        `this gateway already has ${all.length} schedules (the most allowed is ${this.limits.perTenant}): cancel one first`,
      );
    }
  }

  /** A random id no schedule has yet. */
  private async freshId(): Promise<string> {
    for (let i = 0; i < 5; i++) {
      const id = this.newId();
      if (!(await this.store.getSchedule(id))) return id;
    }
    throw new ScheduleError("schedule_invalid", "could not find a free schedule id: try again");
  }
}

function checkAction(action: ScheduleAction): void {
  const text = action.kind === "send" ? action.text : action.prompt;
  if (!text.trim()) {
    throw new ScheduleError("schedule_invalid", action.kind === "send" ? "the reminder text is empty" : "the prompt is empty");
  }
}

/** `remind: stretch`, `run: send me the build status`, cut at {@link NAME_MAX}. */
export function defaultName(action: ScheduleAction): string {
  const text = (action.kind === "send" ? action.text : action.prompt).replace(/\s+/g, " ").trim();
  const short = text.length > NAME_MAX ? `${text.slice(0, NAME_MAX - 1).trimEnd()}…` : text;
  return `${action.kind === "send" ? "remind" : "run"}: ${short}`;
}

/** A list entry by id, or by its 1-based number (a number, or a string of digits). */
function pick(list: Schedule[], idOrIndex: string | number): Schedule | undefined {
  const text = String(idOrIndex).trim().replace(/^`|`$/g, "");
  const byId = list.find((s) => s.id === text);
  if (byId) return byId;
  if (!/^\d+$/.test(text)) return undefined;
  return list[Number(text) - 1];
}

function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s % 3600 === 0) return `${s / 3600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

/** Each tenant's book over its view of the store, for the agent's schedule tools. */
export function booksOf(
  stores: () => (Schedules & { readonly tenant: string })[],
  limits: ScheduleLimits,
  clock?: () => number,
): (tenant: string) => ScheduleBook {
  return (tenant) => {
    const store = stores().find((s) => s.tenant === tenant);
    if (!store) throw new Error(`no store for tenant ${tenant}`);
    return new ScheduleBook({ store, limits, ...(clock ? { clock } : {}) });
  };
}
