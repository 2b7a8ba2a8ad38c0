/**
 * What a harness last saw of its agent, for `status()`: whether the agent (its model, or its
 * server) could be reached, and the newest failure to reach or run it.
 */
import type { AgentStatus } from "./types.js";

export class AgentHealth {
  /** False after a run or a probe could not reach the agent, until one succeeds. */
  reachable = true;
  lastError: AgentStatus["last_error"] = null;

  /** Notes a failure as the newest error; `unreachable` when it could not connect (or its key was refused). */
  fail(message: string, unreachable: boolean): void {
    this.lastError = { message, at: new Date().toISOString() };
    if (unreachable) this.reachable = false;
  }
}
