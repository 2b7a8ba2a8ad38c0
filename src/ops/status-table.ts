/** `antler status`: a running gateway's channel reports as a terminal table, and a line on its agent. */
import type { ChannelReport } from "../channels/registry.js";
import type { AgentStatus } from "../harness/types.js";

function ago(iso: string | null, now: number): string {
  if (!iso) return "-";
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`;
}

export function formatStatusTable(reports: ChannelReport[], now = Date.now()): string {
  const header = ["CHANNEL", "STATE", "CONN", "MODE", "IN", "RUNS", "REPLIES", "ERRORS", "429", "LAST IN", "LAST OUT", "PROBLEM"];
  const rows = reports.map((r) => [
    r.name,
    r.state,
    r.connected ? "yes" : "no",
    r.mode ?? "-",
    String(r.counters.inbound),
    String(r.counters.runs),
    String(r.counters.replies),
    String(r.counters.errors),
    String(r.counters.rate_limited),
    ago(r.last_inbound_at, now),
    ago(r.last_outbound_at, now),
    r.reason ?? (r.last_error ? `${r.last_error.message} (${ago(r.last_error.at, now)} ago)` : ""),
  ]);
  return textTable(header, rows);
}

/** Rows under a header, each column as wide as its widest cell; the last column is not padded. */
export function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join("\n")}\n`;
}

/** One line on the agent backend: what it is, whether it answers, its last problem. */
export function formatAgentLine(status: AgentStatus, now = Date.now()): string {
  const problem = status.last_error ? `; last error ${ago(status.last_error.at, now)} ago: ${status.last_error.message}` : "";
  return `\nagent: ${status.backend} ${status.target} (${status.reachable ? "reachable" : "NOT reachable"})${problem}\n`;
}
