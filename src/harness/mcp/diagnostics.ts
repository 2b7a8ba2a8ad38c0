/**
 * Readable failure messages for MCP servers: what `/api/mcp`, `antler doctor` and the model see.
 * A server's own last words on stderr are often the real reason, so the tail is kept and quoted.
 */
import type { McpServerConfig } from "../../config/schema.js";
import { errorMessage } from "../../errors.js";

const MAX_MESSAGE = 600;
const MAX_TAIL = 4000;

/** Keeps the end of a process's stderr and hands each complete line to `onLine`. */
export class StderrTail {
  #text = "";
  #partial = "";

  constructor(private readonly onLine?: (line: string) => void) {}

  push(chunk: Buffer | string): void {
    const text = this.#partial + String(chunk);
    const lines = text.split("\n");
    this.#partial = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) this.onLine?.(line.trimEnd());
    this.#text = (this.#text + String(chunk)).slice(-MAX_TAIL);
  }

  /** The last non-empty line, or undefined when the process wrote nothing. */
  last(): string | undefined {
    return this.#text
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .at(-1);
  }
}

function withStderr(message: string, stderr: string | undefined): string {
  const full = stderr ? `${message} (stderr: ${stderr})` : message;
  return full.length > MAX_MESSAGE ? `${full.slice(0, MAX_MESSAGE - 1)}…` : full;
}

/** Why a connection attempt failed, in one line. */
export function describeConnectError(err: unknown, config: McpServerConfig, stderr: string | undefined): string {
  const text = errorMessage(err);
  if (err instanceof Error && err.name === "StartTimeoutError") {
    return withStderr(`did not answer within ${config.timeout_ms} ms`, stderr);
  }
  if (config.transport === "stdio" && /\bENOENT\b/.test(text)) {
    return withStderr(`command not found: ${config.command} (check the path, or install it)`, stderr);
  }
  if (config.transport !== "stdio" && /fetch failed|ECONNREFUSED|ENOTFOUND/.test(text)) {
    // Only the origin: a URL's path or query may carry a key.
    return `cannot reach ${originOf(config.url)} (${/ENOTFOUND/.test(text) ? "unknown host" : "connection failed"})`;
  }
  // The adapter wraps the cause as `Failed to connect to stdio server "x": <cause>`; keep the cause.
  const cause = text.replace(/^Failed to (connect to|create) [^:]*?server "[^"]*"[^:]*: /, "");
  return withStderr(cause.replace(/^(MCPClientError|McpError|TypeError|Error): /, ""), stderr);
}

function originOf(url: string | undefined): string {
  try {
    return new URL(url ?? "").origin;
  } catch {
    return "the server URL";
  }
}

/** Why a running server went away. */
export function describeExit(code: number | null, signal: NodeJS.Signals | null, stderr: string | undefined): string {
  // A signal came from outside; stderr explains only an exit the server chose itself.
  if (signal) return `the server process was killed by ${signal}`;
  return withStderr(`the server process exited with code ${code}`, stderr);
}
