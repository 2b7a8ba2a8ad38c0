#!/usr/bin/env node
// Builds dist/ from src/: TypeScript through tsc's incremental build (tsconfig.build.json keeps
// its build info in dist/), then the web chat's static files (src/channels/web/public).
//
//   node scripts/build.mjs             build (what `npm run build` runs; tsc redoes only what changed)
//   node scripts/build.mjs --if-stale  build only when an input changed since the last build
//                                      (what `npm start` runs first); otherwise start at once
//
// "Changed" means a file under src/ (README.md files aside), tsconfig.json, tsconfig.build.json
// or package-lock.json was added, removed, resized or touched since the last successful build:
// their paths, sizes and mtimes are kept in dist/.build-stamp. Outputs of source files that no
// longer exist are removed, so dist/ never serves a deleted module.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const INPUT_FILES = ["tsconfig.json", "tsconfig.build.json", "package-lock.json"];
const PUBLIC = path.join("channels", "web", "public");
const STAMP = ".build-stamp";
const BUILD_INFO = ".tsbuildinfo"; // tsconfig.build.json's tsBuildInfoFile
const OUTPUT_SUFFIXES = [".js", ".js.map", ".d.ts", ".d.ts.map"];

/** Every file below `dir`, as paths relative to `root` with forward slashes, sorted. */
function filesUnder(root, dir) {
  const found = [];
  const walk = (rel) => {
    for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) found.push(child.split(path.sep).join("/"));
    }
  };
  if (existsSync(path.join(root, dir))) walk(dir);
  return found.sort();
}

/** The build's inputs as path -> "size mtime", the record kept in dist/.build-stamp. */
export function inputRecord(root) {
  const sources = filesUnder(root, "src").filter((f) => !f.endsWith(".md")); // READMEs are not built
  const inputs = [...sources, ...INPUT_FILES.filter((f) => existsSync(path.join(root, f)))];
  const record = {};
  for (const rel of inputs) {
    const s = statSync(path.join(root, rel));
    record[rel] = `${s.size} ${Math.trunc(s.mtimeMs)}`;
  }
  return record;
}

/** Why dist/ must be rebuilt ("src changed: src/a.ts, …"), or null when it matches the last build. */
export function staleReason(root) {
  const outDir = path.join(root, "dist");
  const stampFile = path.join(outDir, STAMP);
  if (!existsSync(path.join(outDir, "cli.js"))) return "no earlier build in dist/";
  if (!existsSync(stampFile)) return "the last build did not finish";
  let before;
  try {
    before = JSON.parse(readFileSync(stampFile, "utf8"));
  } catch {
    return "the stamp of the last build is unreadable";
  }
  const now = inputRecord(root);
  const changed = [...new Set([...Object.keys(before), ...Object.keys(now)])].filter((f) => before[f] !== now[f]);
  if (changed.length === 0) return null;
  const named = changed.slice(0, 3).join(", ") + (changed.length > 3 ? ` and ${changed.length - 3} more` : "");
  return `changed since the last build: ${named}`;
}

/** Removes compiled outputs whose source file is gone (tsc's incremental build leaves them). */
function removeOrphans(root) {
  const outDir = path.join(root, "dist");
  for (const rel of filesUnder(outDir, ".")) {
    if (rel.startsWith(`${PUBLIC.split(path.sep).join("/")}/`)) continue;
    const suffix = OUTPUT_SUFFIXES.find((s) => rel.endsWith(s));
    if (!suffix) continue;
    const stem = rel.slice(0, -suffix.length);
    const sources = [".ts", ".mts", ".js", ".mjs"].map((ext) => path.join(root, "src", stem + ext));
    if (!sources.some((s) => existsSync(s))) rmSync(path.join(outDir, rel));
  }
}

/** Runs tsc on tsconfig.build.json, copies the web chat's files and writes the stamp. */
export function build(root, { tsc = runTsc } = {}) {
  const inputs = inputRecord(root); // taken before compiling: an edit during the build rebuilds next time
  const stampFile = path.join(root, "dist", STAMP);
  // Without a finished earlier build, tsc's build info may describe outputs that are gone.
  if (!existsSync(stampFile) || !existsSync(path.join(root, "dist", "cli.js")))
    rmSync(path.join(root, "dist", BUILD_INFO), { force: true });
  rmSync(stampFile, { force: true }); // a build that fails half-way is not a finished build
  tsc(root);
  removeOrphans(root);
  const publicOut = path.join(root, "dist", PUBLIC);
  rmSync(publicOut, { recursive: true, force: true });
  if (existsSync(path.join(root, "src", PUBLIC))) cpSync(path.join(root, "src", PUBLIC), publicOut, { recursive: true });
  writeFileSync(stampFile, `${JSON.stringify(inputs, null, 1)}\n`);
}

/** The TypeScript compiler of this checkout, on tsconfig.build.json; a type error ends the build. */
function runTsc(root) {
  const tscBin = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tscBin, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (exit ${result.status ?? result.signal})`);
}

function main(argv) {
  const root = process.cwd();
  const started = Date.now();
  if (argv.includes("--if-stale")) {
    const reason = staleReason(root);
    if (reason === null) {
      console.error("antler: dist/ is up to date (no source changed since the last build); nothing to compile");
      return;
    }
    console.error(`antler: building dist/ (${reason})…`);
  } else {
    console.error("antler: building dist/…");
  }
  build(root);
  console.error(`antler: dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    console.error(`antler: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
