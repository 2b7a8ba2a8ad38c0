/**
 * The status page's part about what Antler says first: every schedule (next fire, last result
 * and its delivery, why one is disabled), and the outbox's messages that wait or failed.
 */

import type { OutboxEntry } from "../bindings/outbox.js";
import type { ScheduleReport } from "../core/outbox/index.js";
import { esc } from "./html.js";

export interface PageSpeaker {
  schedules: ScheduleReport[];
  /** The newest outbox entries not yet sent (waiting, in flight or failed). */
  unsent: OutboxEntry[];
}

function when(ms: number | undefined, now: number): string {
  if (ms === undefined) return '<span class="muted">—</span>';
  const s = Math.round((ms - now) / 1000);
  const rel =
    Math.abs(s) < 90
      ? `${Math.abs(s)} s`
      : Math.abs(s) < 5400
        ? `${Math.round(Math.abs(s) / 60)} min`
        : `${Math.round(Math.abs(s) / 3600)} h`;
  return `${esc(new Date(ms).toISOString().replace("T", " ").slice(0, 19))} UTC<div class="muted">${s >= 0 ? `in ${rel}` : `${rel} ago`}</div>`;
}

function timing(s: ScheduleReport): string {
  return "cron" in s.timing ? `cron <code>${esc(s.timing.cron)}</code> (${esc(s.timing.tz)})` : `once (${esc(s.timing.tz)})`;
}

function scheduleRow(s: ScheduleReport, now: number): string {
  const last = s.lastResult
    ? `${esc(s.lastResult)}${s.lastDelivery ? ` · ${esc(s.lastDelivery.state)}` : ""}${s.lastDelivery?.error ? `<div class="reason">${esc(s.lastDelivery.error)}</div>` : ""}`
    : '<span class="muted">not yet</span>';
  const state = `${esc(s.state)}${s.reason ? `<div class="reason">${esc(s.reason)}</div>` : ""}`;
  return `<tr data-schedule="${esc(s.id)}"><td><b>${esc(s.name)}</b><div class="muted"><code>${esc(s.id)}</code> · ${esc(s.origin)} · ${timing(s)}</div></td>
  <td>${esc(s.channel)}<div class="muted">${esc(s.key)}</div></td><td>${state}</td><td>${s.state === "active" ? when(s.nextFireAt, now) : '<span class="muted">—</span>'}</td>
  <td>${last}<div class="muted">${s.fires} fired · ${s.missed} missed · ${s.skipped} skipped</div></td></tr>`;
}

function unsentRow(e: OutboxEntry, now: number): string {
  return `<tr data-outbox="${esc(e.id)}"><td><code>${esc(e.id.slice(0, 8))}</code><div class="muted">${esc(e.kind)} · ${esc(e.source)}</div></td>
  <td>${esc(e.channel)}<div class="muted">${esc(e.key)}</div></td><td>${esc(e.state)} · ${e.attempts} attempt${e.attempts === 1 ? "" : "s"}</td>
  <td>${e.error ? `<span class="reason">${esc(e.error)}</span>` : '<span class="muted">—</span>'}</td><td>${when(e.updatedAt, now)}</td></tr>`;
}

/** Nothing when there are no schedules and nothing waits or failed. */
export function speakerSection(speaker: PageSpeaker | undefined, now: number): string {
  if (!speaker || (speaker.schedules.length === 0 && speaker.unsent.length === 0)) return "";
  const parts: string[] = [];
  if (speaker.schedules.length > 0) {
    parts.push(`<h2>Schedules</h2>
<table>
<thead><tr><th>Schedule</th><th>Where</th><th>State</th><th>Next fire</th><th>Last result</th></tr></thead>
<tbody>
${speaker.schedules.map((s) => scheduleRow(s, now)).join("\n")}
</tbody>
</table>`);
  }
  if (speaker.unsent.length > 0) {
    parts.push(`<h2>Outbox: waiting and failed</h2>
<table>
<thead><tr><th>Entry</th><th>Where</th><th>State</th><th>Why</th><th>Last change</th></tr></thead>
<tbody>
${speaker.unsent.map((e) => unsentRow(e, now)).join("\n")}
</tbody>
</table>`);
  }
  return parts.join("\n");
}
