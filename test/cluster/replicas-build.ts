/**
 * The replicas run the built gateway (`dist/cli.js`), as in production. Before a run this builds
 * it with `npm run build` when it is missing or older than any file under `src/`, and otherwise
 * leaves it alone (a build takes most of a minute on a small machine). The build's age is its
 * stamp's (`dist/.build-stamp`, written at the end of every build): tsc's incremental build
 * leaves unchanged outputs such as dist/cli.js with their old times.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { CLI, ROOT } from "../reliability/gateway-process.js";

/** Newest modification time (ms) of any file under `dir` but READMEs (the build skips them too). */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isFile() && entry.name.endsWith(".md")) continue;
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

/** Whether dist/cli.js is missing or older than the sources; `why` says which. */
export function buildNeeded(): { needed: boolean; why: string } {
  if (!existsSync(CLI)) return { needed: true, why: "dist/cli.js is missing" };
  const stamp = path.join(ROOT, "dist", ".build-stamp");
  if (!existsSync(stamp)) return { needed: true, why: "the last build did not finish" };
  const src = newest(path.join(ROOT, "src"));
  const built = statSync(stamp).mtimeMs;
  return src > built ? { needed: true, why: "src/ changed after the last build" } : { needed: false, why: "dist/ is current" };
}

/** Builds dist/ when {@link buildNeeded} says so; returns what it did. */
export async function ensureBuilt(): Promise<string> {
  const { needed, why } = buildNeeded();
  if (!needed) return why;
  const started = Date.now();
  await promisify(execFile)("npm", ["run", "build"], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  return `${why}: built in ${((Date.now() - started) / 1000).toFixed(0)} s`;
}
