/**
 * The operator's status page: plain server-rendered HTML, no build step, refreshing itself.
 * Everything shown comes from the same reports as GET /api/channels.
 */
import type { ChannelReport } from "../channels/registry.js";

const COLORS: Record<string, string> = {
  running: "#1a7f37",
  starting: "#9a6700",
  degraded: "#bc4c00",
  failed: "#cf222e",
  stopped: "#57606a",
  disabled: "#8c959f",
};

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function ago(iso: string | null, now: number): string {
  if (!iso) return "never";
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  return `${Math.round(s / 3600)}h ago`;
}

function row(r: ChannelReport, now: number): string {
  const color = COLORS[r.state] ?? "#57606a";
  const problem = r.last_error
    ? `${esc(r.last_error.message)} <span class="muted">(${ago(r.last_error.at, now)})</span>`
    : '<span class="muted">none</span>';
  const c = r.counters;
  return `<tr data-channel="${esc(r.name)}">
  <td><b>${esc(r.name)}</b><div class="muted">${esc(r.mode ?? "")}</div></td>
  <td><span class="state" style="background:${color}">${esc(r.state)}</span>${r.connected ? "" : ' <span class="muted">not connected</span>'}
    ${r.reason ? `<div class="${r.state === "failed" ? "reason" : "muted"}">${esc(r.reason)}</div>` : ""}</td>
  <td>${problem}</td>
  <td>in ${ago(r.last_inbound_at, now)}<br>out ${ago(r.last_outbound_at, now)}</td>
  <td class="num">${c.inbound} / ${c.runs} / ${c.replies} / ${c.errors} / ${c.rate_limited}</td>
</tr>`;
}

export function renderStatusPage(
  reports: ChannelReport[],
  info: { version: string; startedAt: number; refreshSeconds?: number },
): string {
  const now = Date.now();
  const refresh = info.refreshSeconds ?? 5;
  const healthy = reports.filter((r) => r.enabled).every((r) => r.state === "running");
  const rows =
    reports.length > 0 ? reports.map((r) => row(r, now)).join("\n") : '<tr><td colspan="5">No channels configured.</td></tr>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="${refresh}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Antler status</title>
<style>
  body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #1f2328; }
  h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
  table { border-collapse: collapse; width: 100%; margin-top: 1rem; }
  th, td { text-align: left; padding: .5rem .75rem; border-bottom: 1px solid #d0d7de; vertical-align: top; }
  th { font-weight: 600; background: #f6f8fa; }
  .state { color: #fff; border-radius: 1rem; padding: .1rem .6rem; font-weight: 600; }
  .muted { color: #656d76; font-size: 12px; }
  .reason { color: #cf222e; font-size: 12px; margin-top: .25rem; }
  .num { font-variant-numeric: tabular-nums; white-space: nowrap; }
  .summary { font-weight: 600; color: ${healthy ? "#1a7f37" : "#cf222e"}; }
</style>
</head>
<body>
<h1>Antler</h1>
<div class="muted">version ${esc(info.version)} · up ${ago(new Date(info.startedAt).toISOString(), now).replace(" ago", "")} · refreshes every ${refresh}s</div>
<p class="summary">${healthy ? "All enabled channels are running." : "Some enabled channels need attention."}</p>
<table>
<thead><tr><th>Channel</th><th>State</th><th>Last error</th><th>Traffic</th><th class="num">in / runs / replies / errors / 429</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</body>
</html>`;
}
