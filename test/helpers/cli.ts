/**
 * Runs the CLI the way a user runs `antler`, and collects what it prints: the built `dist/cli.js`
 * when dist/ is current (CI builds before it tests, and a process starts in a fraction of the
 * time), else the sources through tsx, so a local run after an edit tests the edit.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildNeeded } from "../cluster/replicas-build.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const CLI = path.join(ROOT, "src/cli.ts");
const BUILT_CLI = path.join(ROOT, "dist/cli.js");
/** Whether dist/ holds a build of the current sources, decided once per test file. */
const useBuilt = !buildNeeded().needed;

export interface CliProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

export function spawnCli(args: string[], env: Record<string, string | undefined> = {}, cwd = ROOT): CliProcess {
  const entry = useBuilt ? [BUILT_CLI] : ["--import", "tsx", CLI];
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd,
    env: { ...process.env, NODE_OPTIONS: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

export async function runCli(args: string[], env: Record<string, string | undefined> = {}, cwd = ROOT) {
  const p = spawnCli(args, env, cwd);
  const code = await p.exited;
  return { code, output: p.output() };
}

/** Writes `text` to a fresh temp folder as config.yaml and returns its path. */
export function tempConfig(text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "antler-cfg-"));
  const file = path.join(dir, "config.yaml");
  writeFileSync(file, text);
  return file;
}
