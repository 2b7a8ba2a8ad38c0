/** Shared setup of the MCP tests: the real `@modelcontextprotocol/server-everything` over stdio. */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { eventually } from "../../src/testing/wait.js";
import type { WireMessage } from "../fakes/openai.js";

const require = createRequire(import.meta.url);

/** The stdio entry of server-everything, run with this Node: no npx, no network. */
export function everythingServer(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const pkg = require.resolve("@modelcontextprotocol/server-everything/package.json");
  const manifest = JSON.parse(readFileSync(pkg, "utf8")) as { bin: Record<string, string> };
  const bin = path.join(path.dirname(pkg), Object.values(manifest.bin)[0] ?? "dist/index.js");
  return { command: process.execPath, args: [bin, "stdio"], timeout_ms: 20_000, ...extra };
}

/**
 * A stdio "server" that starts and never answers the MCP handshake. It writes its pid to
 * `pidFile` so a test can check the process is gone afterwards.
 */
export function hangingServer(pidFile: string, timeoutMs = 500): Record<string, unknown> {
  const script = "require('fs').writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1000);";
  return { command: process.execPath, args: ["-e", script, pidFile], timeout_ms: timeoutMs };
}

/** True while a process with this pid exists. */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  await eventually(check, ms);
}

export function readPid(file: string): number {
  if (!existsSync(file)) throw new Error(`${file} was not written`);
  return Number(readFileSync(file, "utf8"));
}

/** The tool messages of a request, as text. */
export function toolMessages(messages: WireMessage[] | undefined): Array<{ name?: string; text: string }> {
  return (messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => ({
      name: m.name,
      text: typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join(""),
    }));
}
