/**
 * Failures of a LangGraph API server, each as a short sentence for the chat and a precise one for
 * the operator (`last_error` in the status, `antler doctor`). The SDK reports a server it cannot
 * reach as an error named `ConnectionError`, and an HTTP failure as an error with `status`.
 */
import { MESSAGES, type RunError, toRunError } from "../run-errors.js";

/** A run that failed on the server (the stream's `error` event). */
export class RemoteRunError extends Error {
  override readonly name = "RemoteRunError";
}

/** A run failure with the operator's version of it; `detail` is absent for routine endings. */
export interface RemoteFailure extends RunError {
  detail?: string;
}

const CONNECT = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|fetch failed|Unable to connect|socket hang up/i;

function statusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === "number" ? status : undefined;
}

function text(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Classifies what a call to the server threw. `url` and `assistant` make the operator's detail. */
export function toRemoteFailure(
  err: unknown,
  where: { url: string; assistant: string; aborted: boolean; reason?: unknown },
): RemoteFailure {
  if (where.aborted) return toRunError(err, true, where.reason);
  if (err instanceof RemoteRunError) {
    return { code: "agent_error", message: MESSAGES.agentFailed, detail: `a run failed on the server: ${err.message}` };
  }
  const status = statusOf(err);
  if (status === 401 || status === 403) {
    return {
      code: "agent_error",
      message: MESSAGES.agentAuth,
      detail: `${where.url} rejected the API key (HTTP ${status}): check agent.remote.api_key`,
    };
  }
  if (status === 404 && /assistant/i.test(text(err))) {
    return {
      code: "agent_error",
      message: MESSAGES.agentUnknown,
      detail: `${where.url} has no assistant or graph "${where.assistant}": check agent.remote.assistant_id`,
    };
  }
  if (status !== undefined) {
    return { code: "agent_error", message: MESSAGES.agentFailed, detail: `${where.url} answered ${text(err).slice(0, 300)}` };
  }
  const cause = (err as { cause?: unknown } | null)?.cause;
  if ((err as { name?: string } | null)?.name === "ConnectionError" || CONNECT.test(`${text(err)} ${text(cause ?? "")}`)) {
    return {
      code: "agent_error",
      message: MESSAGES.agentUnreachable,
      detail: `${where.url} is not reachable: ${text(cause ?? err).slice(0, 200)}`,
    };
  }
  return { ...toRunError(err, false), detail: text(err).slice(0, 300) };
}

/**
 * What of an SDK error goes to the log: name, message, status and cause. Not the whole object:
 * the SDK's HTTP errors hold the fetch Response, which log serializers cannot walk safely.
 */
export function loggable(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const out: Record<string, unknown> = { type: err.name, message: err.message };
  const status = statusOf(err);
  if (status !== undefined) out.status = status;
  const cause = (err as { cause?: unknown }).cause;
  if (cause) out.cause = text(cause);
  return out;
}
