/**
 * Hides configured credentials in what operators read: a channel's report and an agent's status
 * quote platform and model errors, and those may quote a token.
 */
import type { ChannelReport } from "../channels/registry.js";
import type { AgentStatus } from "../harness/types.js";

/** Replaces every configured secret in a text (see `secretScrubber`). */
export type Scrub = (text: string) => string;

/** The report with its reason and last error scrubbed. */
export function redactReport(report: ChannelReport, scrub: Scrub): ChannelReport {
  return {
    ...report,
    reason: report.reason === null ? null : scrub(report.reason),
    last_error: report.last_error && { ...report.last_error, message: scrub(report.last_error.message) },
  };
}

/** The status with its last error scrubbed. */
export function redactStatus<S extends AgentStatus>(status: S, scrub: Scrub): S {
  return {
    ...status,
    last_error: status.last_error && { ...status.last_error, message: scrub(status.last_error.message) },
  };
}
