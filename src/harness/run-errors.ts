/**
 * The one place that turns whatever a run threw into a RunEvent error: a stable code for the
 * caller and a short sentence a chat user can read. No stack, no URL, no key: the full error
 * goes to the log instead.
 */
import { GraphRecursionError } from "@langchain/langgraph";

export type RunErrorCode =
  | "model_error"
  | "agent_error"
  | "rate_limited"
  | "cancelled"
  | "interrupted"
  | "timeout"
  | "busy"
  | "no_pending"
  | "approval_invalid"
  | "detached"
  | "shutdown"
  | "internal";

export interface RunError {
  code: RunErrorCode;
  message: string;
}

interface ErrorLike {
  name?: string;
  message?: string;
  status?: number;
  /** An AggregateError's parts: Node tries each address of a host and reports every refusal. */
  errors?: unknown[];
  code?: string;
  lc_error_code?: string;
  cause?: unknown;
}

/** The error and its causes, outermost first (each middleware wraps it again: the socket error sits deep). */
function chain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  let current: unknown = err;
  while (current && typeof current === "object" && out.length < 16) {
    out.push(current as ErrorLike);
    current = (current as ErrorLike).cause;
  }
  return out;
}

/** Codes of a connection that never opened (refused, no such host, no route), as against one that broke. */
const UNREACHABLE = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|UND_ERR_CONNECT_TIMEOUT/;
const NETWORK = /terminated|fetch failed|socket hang up|ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|network|connection/i;
const MALFORMED = /Could not parse|Unexpected token|Unexpected end of JSON|in JSON at position|Expected .* after/i;

/** The error says no connection was ever made: the endpoint is down, unknown or unrouted. */
function couldNotConnect(e: ErrorLike): boolean {
  const parts = [e, ...(Array.isArray(e.errors) ? (e.errors as ErrorLike[]) : [])];
  return parts.some((p) => UNREACHABLE.test(`${p?.code ?? ""} ${p?.message ?? ""}`));
}

/** What a chat user reads. Those about settings name the config key, never its value or the URL. */
export const MESSAGES = {
  rate_limited: "The AI model is receiving too many requests right now. Please try again in a minute.",
  server: "The AI model service had an error. Please try again.",
  auth: "The AI model rejected our API key. An operator needs to set the model's api_key in the config (OPENAI_API_KEY).",
  unreachable:
    "The AI model's server can't be reached. An operator needs to check the model's base_url in the config (OPENAI_BASE_URL).",
  rejected: "The AI model rejected the request. Please try again or start a new conversation with /new.",
  disconnect: "The connection to the AI model broke off. Please try again.",
  slow: "The AI model took too long to answer. Please try again.",
  stalled: "The AI model stopped answering in the middle of the reply. Please try again.",
  malformed: "The AI model sent a reply that could not be read. Please try again.",
  recursion: "The agent took too many steps without finishing and stopped.",
  detached: "I'm restarting. The rest of this answer follows as soon as I'm back.",
  shutdown: "I'm restarting and had to stop this reply. Please send your message again in a minute.",
  agentUnreachable: "The agent service can't be reached right now. Please try again in a few minutes.",
  agentAuth: "The agent service refused our credentials. An operator needs to check the agent settings.",
  agentUnknown: "The agent service doesn't know the configured assistant. An operator needs to check the agent settings.",
  agentFailed: "The agent failed while answering. Please try again, or start a new conversation with /new.",
  internal: "Something went wrong while answering. Please try again.",
  cancelled: "Stopped: the reply was cancelled.",
  interrupted: "Interrupted by your new message: answering that one now.",
  timeout: "Stopped: the reply took too long. Please try again, perhaps with a smaller request.",
  busy: "A reply is still being written in this conversation. Please wait for it to finish.",
  no_pending: "There is no open question to answer in this conversation.",
} as const;

/**
 * Maps a thrown value to a run error. `aborted` says whether the run's own signal fired; a
 * caller that aborts with a reason named `TimeoutError` gets a `timeout` rather than `cancelled`,
 * one that aborts with `DetachError` (the gateway stopping) a `shutdown`.
 */
export function toRunError(err: unknown, aborted: boolean, reason?: unknown): RunError {
  if (aborted) {
    const name = (reason as { name?: string } | undefined)?.name;
    if (name === "TimeoutError") return { code: "timeout", message: MESSAGES.timeout };
    if (name === "InterruptError") return { code: "interrupted", message: MESSAGES.interrupted };
    // The gateway is stopping: say so, not that the user stopped the reply.
    if (name === "DetachError") return { code: "shutdown", message: MESSAGES.shutdown };
    return { code: "cancelled", message: MESSAGES.cancelled };
  }
  const errors = chain(err);
  if (errors.some((e) => e instanceof GraphRecursionError || e.name === "GraphRecursionError")) {
    return { code: "internal", message: MESSAGES.recursion };
  }
  const status = errors.find((e) => typeof e.status === "number")?.status;
  if (status === 429 || errors.some((e) => e.lc_error_code === "MODEL_RATE_LIMIT" || e.name === "RateLimitError")) {
    return { code: "rate_limited", message: MESSAGES.rate_limited };
  }
  if (status !== undefined) {
    if (status >= 500) return { code: "model_error", message: MESSAGES.server };
    if (status === 401 || status === 403) return { code: "model_error", message: MESSAGES.auth };
    if (status >= 400) return { code: "model_error", message: MESSAGES.rejected };
  }
  if (errors.some((e) => e.name === "SyntaxError" || MALFORMED.test(e.message ?? ""))) {
    return { code: "model_error", message: MESSAGES.malformed };
  }
  if (errors.some((e) => e.name === "ModelStallError")) {
    return { code: "model_error", message: MESSAGES.stalled };
  }
  if (errors.some((e) => e.name === "APIConnectionTimeoutError" || /request timed out/i.test(e.message ?? ""))) {
    return { code: "model_error", message: MESSAGES.slow };
  }
  if (errors.some(couldNotConnect)) return { code: "model_error", message: MESSAGES.unreachable };
  if (errors.some((e) => e.name === "APIConnectionError" || NETWORK.test(`${e.code ?? ""} ${e.message ?? ""}`))) {
    return { code: "model_error", message: MESSAGES.disconnect };
  }
  return { code: "internal", message: MESSAGES.internal };
}

/** Longest cause text a log line carries. */
const CAUSE_MAX = 300;

/**
 * The failure in one line for the log: each distinct message of the error and its causes,
 * outermost first (`Connection error.: fetch failed: connect ECONNREFUSED 127.0.0.1:9`). The
 * wrappers the middleware chain adds repeat their cause's text and are left out, so the text
 * does not say the same thing once per layer.
 */
export function failureCause(err: unknown): string {
  const parts: string[] = [];
  for (const e of chain(err).reverse()) {
    const inner = Array.isArray(e.errors) ? (e.errors[0] as ErrorLike | undefined) : undefined;
    for (const text of [inner?.message, e.message ?? String(e)]) {
      const message = text?.trim();
      if (message && !parts.some((seen) => message.includes(seen) || seen.includes(message))) parts.push(message);
    }
  }
  const cause = parts.reverse().join(": ") || String(err);
  return cause.length > CAUSE_MAX ? `${cause.slice(0, CAUSE_MAX - 1)}…` : cause;
}
