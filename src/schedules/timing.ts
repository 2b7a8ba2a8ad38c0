/**
 * When a schedule fires: the next due time of a cron expression in an IANA time zone (croner does
 * the calendar, daylight saving included), or a one-shot time. Also the checks a new timing must
 * pass and the short text people read about it.
 */
import { Cron, CronDate } from "croner";
import type { ScheduleTiming } from "../bindings/schedules.js";
import { ScheduleError } from "./errors.js";

/** 5 fields (minute precision) or 6 (seconds first); croner's 7-field years are not offered. */
const CRON_MODE = "5-or-6-parts" as const;

/** The cron job of a timing, paused: it is only asked for dates, never run. Throws on a bad expression. */
function cronOf(cron: string, tz: string): Cron {
  return new Cron(cron, { timezone: tz, paused: true, mode: CRON_MODE });
}

/** The first due time strictly after `afterMs`; undefined when the timing will not fire again. */
export function nextFireAfter(timing: ScheduleTiming, afterMs: number): number | undefined {
  if ("at" in timing) return timing.at > afterMs ? timing.at : undefined;
  const next = cronOf(timing.cron, timing.tz).nextRun(new Date(afterMs));
  return next ? next.getTime() : undefined;
}

/** The next `count` due times after `afterMs` (fewer when the timing ends sooner). */
export function nextFires(timing: ScheduleTiming, afterMs: number, count: number): number[] {
  if ("at" in timing) return timing.at > afterMs ? [timing.at] : [];
  return cronOf(timing.cron, timing.tz)
    .nextRuns(count, new Date(afterMs))
    .map((d) => d.getTime());
}

/** True when `tz` is a time zone this runtime knows (IANA names, and `UTC`). */
export function isTimeZone(tz: string): boolean {
  if (!tz) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Throws a {@link ScheduleError} (`schedule_invalid`) saying what is wrong with a timing: an
 * unknown time zone, a cron expression croner refuses or that never fires, a one-shot not after
 * `nowMs`.
 */
export function checkTiming(timing: ScheduleTiming, nowMs: number = Date.now()): void {
  if (!isTimeZone(timing.tz)) {
    throw new ScheduleError(
      "schedule_invalid",
      `unknown time zone "${timing.tz}": use an IANA name such as Europe/Berlin or UTC`,
    );
  }
  if ("at" in timing) {
    if (!Number.isFinite(timing.at)) throw new ScheduleError("schedule_invalid", "the time is not a valid date");
    if (timing.at <= nowMs) {
      throw new ScheduleError(
        "schedule_invalid",
        `${formatLocal(timing.at, timing.tz)} (${timing.tz}) is in the past: pick a later time`,
      );
    }
    return;
  }
  let job: Cron;
  try {
    job = cronOf(timing.cron, timing.tz);
  } catch (err) {
    throw new ScheduleError("schedule_invalid", `bad cron expression \`${timing.cron}\`: ${cronReason(err)}`, { cause: err });
  }
  if (!job.nextRun(new Date(nowMs))) {
    throw new ScheduleError("schedule_invalid", `cron expression \`${timing.cron}\` never fires (no such date)`);
  }
}

/** croner's message without its class prefix. */
function cronReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/^CronPattern:\s*/, "");
}

/**
 * A local time in `tz` as epoch ms: `2026-12-04T10:00`, `2026-12-04 10:00:30`; a time with its own
 * offset (`Z`, `+02:00`) is taken as it is. Throws a {@link ScheduleError} for anything else.
 */
export function parseLocalTime(iso: string, tz: string): number {
  if (!isTimeZone(tz)) {
    throw new ScheduleError("schedule_invalid", `unknown time zone "${tz}": use an IANA name such as Europe/Berlin or UTC`);
  }
  const text = iso.trim().replace(" ", "T");
  // A date alone means its midnight.
  const full = /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00` : text;
  let ms: number;
  try {
    ms = new CronDate(full, tz).getTime();
  } catch {
    ms = Number.NaN;
  }
  if (!Number.isFinite(ms) || !realDate(full)) {
    throw new ScheduleError("schedule_invalid", `"${iso}" is not an ISO 8601 time: write it like 2026-12-04T10:00`);
  }
  return ms;
}

/** False for a day the calendar does not have (Feb 30), which would otherwise roll over into March. */
function realDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** Wall-clock fields of `ms` in `tz`. */
export function zoneParts(ms: number, tz: string): Record<"year" | "month" | "day" | "hour" | "minute" | "second", string> {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: tz,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(new Date(ms));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "00";
  return {
    year: get("year"),
    month: get("month"),
    day: get("day"),
    hour: get("hour"),
    minute: get("minute"),
    second: get("second"),
  };
}

/** `2026-12-04 10:00` (seconds only when not zero), the wall clock in `tz`. */
export function formatLocal(ms: number, tz: string): string {
  const p = zoneParts(ms, tz);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}${p.second === "00" ? "" : `:${p.second}`}`;
}

/** ISO 8601 with the zone's offset: `2026-12-04T10:00:00+08:00` (`Z` in UTC). */
export function isoInZone(ms: number, tz: string): string {
  const p = zoneParts(ms, tz);
  const wall = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
  const offsetMin = Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
  const sign = offsetMin < 0 ? "-" : "+";
  const abs = Math.abs(offsetMin);
  const offset =
    offsetMin === 0 ? "Z" : `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${offset}`;
}

/** Short text about a timing: "cron `0 9 * * 1-5` (Europe/Berlin)", "once at 2026-12-04 10:00 (Asia/Shanghai)". */
export function describeTiming(timing: ScheduleTiming): string {
  if ("at" in timing) return `once at ${formatLocal(timing.at, timing.tz)} (${timing.tz})`;
  return `cron \`${timing.cron}\` (${timing.tz})`;
}

/**
 * The shortest gap between consecutive fires among the next `sample` fires after `afterMs`, in
 * ms; undefined for a one-shot or a cron that fires less than twice. A sample, not a proof: a
 * cron that bunches fires only on rare dates could pass.
 */
export function shortestGap(timing: ScheduleTiming, afterMs: number, sample = 16): number | undefined {
  if ("at" in timing) return undefined;
  const fires = nextFires(timing, afterMs, sample);
  let gap: number | undefined;
  for (let i = 1; i < fires.length; i++) {
    const d = (fires[i] ?? 0) - (fires[i - 1] ?? 0);
    if (gap === undefined || d < gap) gap = d;
  }
  return gap;
}
