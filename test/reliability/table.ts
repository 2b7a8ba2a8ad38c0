/** Prints the suite's output: the one summary table, then notes and evidence per probe. */
import type { ProbeResult } from "./harness.js";

const HEADER = ["probe", "messages", "answered exactly once", "lost", "duplicates", "crashes", "max RSS", "result"];

export function failed(r: ProbeResult): boolean {
  return r.lost > 0 || r.duplicates > 0 || r.crashes > 0 || r.failures.length > 0;
}

export function formatTable(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  const rule = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  const [head, ...body] = rows;
  return [line(head ?? []), rule, ...body.map(line)].join("\n");
}

export function summaryTable(results: ProbeResult[]): string {
  const rows = results.map((r) => [
    r.probe,
    String(r.messages),
    String(r.answeredOnce),
    String(r.lost),
    String(r.duplicates),
    String(r.crashes),
    r.maxRssMb > 0 ? `${r.maxRssMb} MB` : "-",
    failed(r) ? "FAIL" : "ok",
  ]);
  return formatTable([HEADER, ...rows]);
}

/** Per probe: failed checks first, then notes, then evidence from the gateway's log. */
export function detailTable(results: ProbeResult[]): string {
  const rows: string[][] = [["probe", "kind", "detail"]];
  for (const r of results) {
    const lines = [
      ...r.failures.map((f) => ["FAILED", f]),
      ...r.notes.map((n) => ["note", n]),
      ...r.evidence.map((e) => ["log", e]),
    ];
    lines.forEach(([kind, detail], i) => {
      rows.push([i === 0 ? r.probe : "", kind ?? "", detail ?? ""]);
    });
  }
  return formatTable(rows);
}
