/**
 * Which child processes an MCP connection attempt spawned. The adapter keeps its stdio transport
 * private until the MCP handshake succeeds, so a server that hangs in the handshake could not be
 * stopped. Node publishes every spawn on the `child_process` diagnostics channel; an
 * AsyncLocalStorage scope ties each spawn to the attempt that caused it.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { ChildProcess } from "node:child_process";
import { subscribe } from "node:diagnostics_channel";

const scope = new AsyncLocalStorage<(child: ChildProcess) => void>();
let subscribed = false;

function onSpawn(message: unknown): void {
  const record = scope.getStore();
  const child = (message as { process?: ChildProcess } | null)?.process;
  if (record && child) record(child);
}

/** Runs `fn`; every process spawned inside it (at any async depth) is passed to `record`. */
export function trackSpawns<T>(record: (child: ChildProcess) => void, fn: () => Promise<T>): Promise<T> {
  if (!subscribed) {
    subscribe("child_process", onSpawn);
    subscribed = true;
  }
  return scope.run(record, fn);
}

export function isRunning(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

/** SIGTERM, then SIGKILL if the process is still there after `graceMs`. Resolves once it is gone. */
export async function stopChild(child: ChildProcess, graceMs = 2000): Promise<void> {
  if (!isRunning(child)) return;
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timers: NodeJS.Timeout[] = [];
  const killed = new Promise<void>((resolve) => {
    timers.push(setTimeout(() => isRunning(child) && child.kill("SIGKILL"), graceMs));
    // Never hang a shutdown on a process we may not signal: give up after a second grace period.
    timers.push(setTimeout(resolve, graceMs * 2));
  });
  await Promise.race([gone, killed]);
  for (const timer of timers) clearTimeout(timer);
}
