/**
 * What people read about schedules in the chat (`/schedules`, a cancel): short, plain Markdown,
 * times on the schedule's own wall clock with its zone named.
 */
import type { Schedule } from "../bindings/schedules.js";
import type { CancelOutcome } from "./book.js";
import { formatLocal } from "./timing.js";

/** `next 2026-12-03 14:05 UTC`, or why there is no next fire. */
export function nextText(schedule: Schedule): string {
  if (schedule.state === "paused") return "paused";
  if (schedule.state === "disabled") return `disabled${schedule.reason ? ` (${schedule.reason})` : ""}`;
  if (schedule.nextFireAt === undefined) return "no next fire";
  return `next ${formatLocal(schedule.nextFireAt, schedule.timing.tz)} ${schedule.timing.tz}`;
}

/** One line: "`k3x9pq2a` — remind: stretch — next 2026-12-03 14:05 UTC", plus the cron of a repeating one. */
export function scheduleLine(schedule: Schedule): string {
  const repeat = "cron" in schedule.timing ? `, cron \`${schedule.timing.cron}\`` : "";
  const owner = schedule.origin === "config" ? " (set by the operator)" : "";
  return `\`${schedule.id}\` — ${escapeLine(schedule.name)}${owner} — ${nextText(schedule)}${repeat}`;
}

/** The answer to `/schedules`: a numbered list, or how to make one. */
export function formatScheduleList(schedules: Schedule[]): string {
  if (schedules.length === 0) {
    return 'No schedules in this conversation. Ask me, e.g. "remind me in 10 minutes to stretch".';
  }
  const lines = schedules.map((s, i) => `${i + 1}. ${scheduleLine(s)}`);
  return `Schedules in this conversation:\n${lines.join("\n")}\n\nCancel one with \`/schedules cancel <number or id>\`.`;
}

/** The answer to a cancel: what was removed, or why nothing was. */
export function formatCancel(outcome: CancelOutcome): string {
  if (outcome.ok) return `Cancelled \`${outcome.schedule.id}\` — ${escapeLine(outcome.schedule.name)}.`;
  return `Not cancelled: ${outcome.reason}.`;
}

/** A name on one line, without Markdown that would break the list (backticks, line breaks). */
function escapeLine(text: string): string {
  return text.replace(/\s+/g, " ").replace(/`/g, "'").trim();
}
