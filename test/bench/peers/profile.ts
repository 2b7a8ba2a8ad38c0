/**
 * Reads a V8 CPU profile (`node --cpu-prof`, as `npm run bench:peers -- --cpu-prof` writes for
 * each contender) and prints where the time went: self time by package or file, and by function.
 * Self time of a function = the sampling intervals in which it was on top of the stack.
 *
 *   tsx test/bench/peers/profile.ts <file.cpuprofile> [rows=12]
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

/** "pkg" (or "@scope/pkg") for node_modules, "antler <file>" for dist/, "node:<module>" for Node's own. */
function owner(url: string): string {
  if (url === "") return "(V8 / native)";
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1] as string;
  const dist = /\/dist\/(.+)$/.exec(url);
  if (dist) return `antler ${dist[1]}`;
  if (url.startsWith("node:")) return url;
  return url.replace(/^file:\/\/.*\/(test|src)\//, "$1/");
}

/** The file, from the package (or dist/) on. */
function shortUrl(url: string): string {
  return url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/(dist|test|src)\//, "$1/");
}

export function summarize(file: string, rows = 12): string {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id);
    const us = profile.timeDeltas[i] ?? 0;
    if (!frame || frame.functionName === "(idle)") return;
    total += us;
    const where = owner(frame.url);
    byOwner.set(where, (byOwner.get(where) ?? 0) + us);
    const fn = `${frame.functionName || "(anonymous)"}  ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  });
  const top = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, rows)
      .map(([k, us]) => `  ${(us / 1000).toFixed(0).padStart(6)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
  return [
    `busy (not idle): ${(total / 1000).toFixed(0)} ms`,
    "self time by package / file:",
    ...top(byOwner),
    "self time by function:",
    ...top(byFunction),
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, rows] = process.argv.slice(2);
  if (!file) throw new Error("usage: profile.ts <file.cpuprofile> [rows]");
  console.log(summarize(file, Number(rows ?? 12)));
}
