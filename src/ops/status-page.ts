/**
 * The operator's status page: plain server-rendered HTML, no build step, refreshing itself.
 * The channels come from the same reports as GET /api/channels, the agents (and their model
 * endpoints, probed) from the same statuses as GET /api/agent.
 */

import type { ChannelReport } from "../channels/registry.js";
import type { AgentStatus } from "../harness/types.js";
import { esc } from "./html.js";
import { type PageSpeaker, speakerSection } from "./status-schedules.js";

/** One agent instance as the page shows it. */
export type PageAgent = AgentStatus & { tenant: string; agent: string };

const COLORS: Record<string, string> = {
  running: "#1a7f37",
  starting: "#9a6700",
  degraded: "#bc4c00",
  failed: "#cf222e",
  stopped: "#57606a",
  disabled: "#8c959f",
  standby: "#0969da",
};

function ago(iso: string | null, now: number): string {
  if (!iso) return "never";
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  return `${Math.round(s / 3600)}h ago`;
}

/** A link to a page on this server (a channel's chat page); only paths, never another site. */
function chatLink(r: ChannelReport, label: string): string {
  if (!r.link?.startsWith("/") || r.link.startsWith("//")) return "";
  return `<a class="chat-link" href="${esc(r.link)}">${esc(label)}</a>`;
}

function row(r: ChannelReport, now: number): string {
  const color = COLORS[r.state] ?? "#57606a";
  const problem = r.last_error
    ? `${esc(r.last_error.message)} <span class="muted">(${ago(r.last_error.at, now)})</span>`
    : '<span class="muted">none</span>';
  const c = r.counters;
  return `<tr data-channel="${esc(r.name)}">
  <td><b>${esc(r.name)}</b><div class="muted">${esc(r.mode ?? "")}</div>${r.link ? `<div>${chatLink(r, "Open the web chat")}</div>` : ""}</td>
  <td><span class="state" style="background:${color}">${esc(r.state)}</span>${r.connected ? "" : ' <span class="muted">not connected</span>'}
    ${r.reason ? `<div class="${r.state === "failed" ? "reason" : "muted"}">${esc(r.reason)}</div>` : ""}</td>
  <td>${problem}</td>
  <td>in ${ago(r.last_inbound_at, now)}<br>out ${ago(r.last_outbound_at, now)}</td>
  <td class="num">${c.inbound} / ${c.runs} / ${c.replies} / ${c.errors} / ${c.rate_limited}</td>
</tr>`;
}

function agentRow(a: PageAgent, now: number): string {
  const color = a.reachable ? COLORS.running : COLORS.failed;
  const problem = a.last_error
    ? `${esc(a.last_error.message)} <span class="muted">(${ago(a.last_error.at, now)})</span>`
    : '<span class="muted">none</span>';
  return `<tr data-agent="${esc(`${a.tenant}/${a.agent}`)}">
  <td><b>${esc(a.agent)}</b><div class="muted">tenant ${esc(a.tenant)}</div></td>
  <td>${esc(a.backend)}<div class="muted">${esc(a.target)}</div></td>
  <td><span class="state" style="background:${color}">${a.reachable ? "reachable" : "not reachable"}</span></td>
  <td class="${a.reachable ? "" : "problem"}">${problem}</td>
</tr>`;
}

const NO_CHANNEL = `No channel is enabled, so nobody can talk to the agent yet.`;
const HOW_TO_ENABLE = `Set <code>enabled: true</code> on a channel under <code>channels:</code> in your config and restart.
  <code>web</code> gives a chat page at <code>/chat</code> with no account to create; each platform's keys are listed in
  <code>config.example.yaml</code> and in <code>src/channels/&lt;name&gt;/README.md</code>.`;

/** The line under the title: all well, nothing enabled, or what needs attention. */
function summary(reports: ChannelReport[], agents: PageAgent[]): { ok: boolean; text: string; hint?: string } {
  const enabled = reports.filter((r) => r.enabled);
  // A channel on standby runs on another replica: nothing to fix here.
  const failing = enabled.filter((r) => r.state !== "running" && r.state !== "standby").length;
  const blocked = agents.filter((a) => !a.reachable).length;
  const parts = [
    failing > 0 ? `${failing} channel${failing === 1 ? "" : "s"}` : "",
    blocked > 0 ? `${blocked} agent${blocked === 1 ? "" : "s"} whose model or backend cannot be used` : "",
  ].filter(Boolean);
  if (enabled.length === 0) {
    const text = parts.length ? `${NO_CHANNEL} Also needs attention: ${parts.join(", ")}.` : NO_CHANNEL;
    return { ok: false, text, hint: HOW_TO_ENABLE };
  }
  if (parts.length) return { ok: false, text: `Needs attention: ${parts.join(", ")}.` };
  return { ok: true, text: "All enabled channels are running and every agent's backend answers." };
}

export function renderStatusPage(
  reports: ChannelReport[],
  info: {
    version: string;
    startedAt: number;
    refreshSeconds?: number;
    agents?: PageAgent[];
    replicas?: PageReplica[];
    speaker?: PageSpeaker;
  },
): string {
  const now = Date.now();
  const refresh = info.refreshSeconds ?? 5;
  const agents = info.agents ?? [];
  const state = summary(reports, agents);
  const rows =
    reports.length > 0 ? reports.map((r) => row(r, now)).join("\n") : '<tr><td colspan="5">No channels configured.</td></tr>';
  const agentRows =
    agents.length > 0
      ? agents.map((a) => agentRow(a, now)).join("\n")
      : '<tr><td colspan="4" class="muted">The agents are not started yet.</td></tr>';
  const linked = reports.filter((r) => r.link);
  const links = linked
    .map((r) => chatLink(r, linked.length > 1 ? `Open the web chat (${r.name})` : "Open the web chat"))
    .filter(Boolean);
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
  h2 { font-size: 1.1rem; margin: 1.5rem 0 0; }
  table { border-collapse: collapse; width: 100%; margin-top: 1rem; }
  th, td { text-align: left; padding: .5rem .75rem; border-bottom: 1px solid #d0d7de; vertical-align: top; }
  th { font-weight: 600; background: #f6f8fa; }
  code { background: #f6f8fa; border-radius: .25rem; padding: 0 .25rem; }
  a { color: #0969da; }
  .state { color: #fff; border-radius: 1rem; padding: .1rem .6rem; font-weight: 600; white-space: nowrap; }
  .muted { color: #656d76; font-size: 12px; }
  .reason, .problem { color: #cf222e; }
  .reason { font-size: 12px; margin-top: .25rem; }
  .num { font-variant-numeric: tabular-nums; white-space: nowrap; }
  @media (max-width: 640px) {
    body { margin: 1rem .75rem; }
    table { display: block; overflow-x: auto; max-width: 100%; }
    th, td { padding: .4rem .5rem; overflow-wrap: anywhere; }
  }
  .summary { font-weight: 600; color: ${state.ok ? "#1a7f37" : "#cf222e"}; }
  .links a { font-weight: 600; margin-right: 1rem; }
</style>
</head>
<body>
<h1>Antler</h1>
<div class="muted">version ${esc(info.version)} · up ${ago(new Date(info.startedAt).toISOString(), now).replace(" ago", "")} · refreshes every ${refresh}s</div>
${links.length ? `<p class="links">${links.join(" ")}</p>` : ""}
<p class="summary">${esc(state.text)}</p>
${state.hint ? `<p class="hint">${state.hint}</p>` : ""}
<h2>Channels</h2>
<table>
<thead><tr><th>Channel</th><th>State</th><th>Last error</th><th>Traffic</th><th class="num">in / runs / replies / errors / 429</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
<h2>Agents and models</h2>
<table>
<thead><tr><th>Agent</th><th>Backend</th><th>State</th><th>Last problem</th></tr></thead>
<tbody>
${agentRows}
</tbody>
</table>
${speakerSection(info.speaker, now)}
${replicaSection(info.replicas ?? [], now)}
</body>
</html>`;
}

/** A gateway process sharing the store, as the page lists it. */
export interface PageReplica {
  id: string;
  host: string;
  pid: number;
  heartbeat_at: string;
  leads: string[];
}

/** With several replicas on one PostgreSQL: each, and the channels it runs alone. Nothing for one process. */
function replicaSection(replicas: PageReplica[], now: number): string {
  if (replicas.length < 2) return "";
  const rows = replicas
    .map(
      (r) => `<tr data-replica="${esc(r.id)}"><td><b>${esc(r.id)}</b><div class="muted">${esc(r.host)} pid ${r.pid}</div></td>
  <td>${r.leads.length ? esc(r.leads.join(", ")) : '<span class="muted">none</span>'}</td><td>${ago(r.heartbeat_at, now)}</td></tr>`,
    )
    .join("\n");
  return `<h2>Replicas</h2>
<table>
<thead><tr><th>Replica</th><th>Runs alone</th><th>Last heartbeat</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`;
}
