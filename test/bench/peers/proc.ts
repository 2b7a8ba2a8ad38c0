/**
 * What a contender of `npm run bench:peers` costs, read from Linux's /proc: the CPU time of a
 * process and all its descendants (utime + stime of each live one, plus the root's cutime +
 * cstime for children it has reaped), and their summed resident memory (VmRSS), sampled every
 * 50 ms for the peak. Clock ticks are converted with `getconf CLK_TCK` (100 on Linux).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const TICK_MS = 1000 / (Number(safe(() => execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())) || 100);

function safe<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined; // the process ended between listing and reading
  }
}

/** ppid and CPU ticks (own, and reaped children's) of one process. */
function stat(pid: number): { ppid: number; own: number; reaped: number } | undefined {
  const text = safe(() => readFileSync(`/proc/${pid}/stat`, "utf8"));
  if (!text) return undefined;
  // Fields after the command name (which may hold spaces and parentheses): state ppid … utime(14) stime cutime cstime.
  const f = text
    .slice(text.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  return { ppid: f[1] ?? 0, own: (f[11] ?? 0) + (f[12] ?? 0), reaped: (f[13] ?? 0) + (f[14] ?? 0) };
}

/** `root` and its descendants. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    const ppid = Number.isInteger(pid) ? stat(pid)?.ppid : undefined;
    if (ppid !== undefined) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i] as number) ?? []));
  return tree;
}

/** CPU ms used so far by the tree under `root`. */
export function treeCpuMs(root: number): number {
  let ticks = 0;
  for (const pid of processTree(root)) {
    const s = stat(pid);
    if (s) ticks += s.own + (pid === root ? s.reaped : 0);
  }
  return ticks * TICK_MS;
}

/** Resident memory of the tree under `root`, in bytes. */
export function treeRssBytes(root: number): number {
  let kb = 0;
  for (const pid of processTree(root)) {
    const status = safe(() => readFileSync(`/proc/${pid}/status`, "utf8"));
    kb += Number(/VmRSS:\s+(\d+)/.exec(status ?? "")?.[1] ?? 0);
  }
  return kb * 1024;
}

/** Samples the tree's RSS every 50 ms until `stop()`, which returns the peak in bytes. */
export function sampleRss(root: number): { stop(): number } {
  let peak = treeRssBytes(root);
  const timer = setInterval(() => {
    peak = Math.max(peak, treeRssBytes(root));
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, treeRssBytes(root));
    },
  };
}
