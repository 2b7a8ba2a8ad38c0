/** Runs the CLI from source, the way a user runs `antler`, and collects what it prints. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const CLI = path.join(ROOT, "src/cli.ts");

export interface CliProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

export function spawnCli(args: string[], env: Record<string, string | undefined> = {}, cwd = ROOT): CliProcess {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
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
