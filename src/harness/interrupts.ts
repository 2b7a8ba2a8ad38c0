/**
 * Interrupts as questions. Whatever a graph passes to `interrupt()` reaches the chat:
 * - the `ask_clarification` shape (`question`, `options`, `kind` or DeerFlow's
 *   `clarification_type`, `context`) becomes a question with buttons;
 * - any other value becomes a question answered in words: its `question`, `message` or
 *   `description`, else its JSON.
 * - the human-in-the-loop shape (`actionRequests`, `reviewConfigs`) becomes an approval: one
 *   request per paused tool call, answered with one decision each.
 * The same rules serve every backend; the remote one sees the values as plain JSON.
 */
import { AntlerError } from "../errors.js";
import { normalizeClarification } from "./tools/clarification.js";
import type { ApprovalAnswer, ApprovalRequest, Clarification, Decision, DecisionType } from "./types.js";

/** Longest question text taken from an interrupt value's JSON. */
const MAX_JSON_QUESTION = 1500;

/** One pending interrupt as LangGraph reports it (state tasks, `__interrupt__` updates). */
export interface PendingInterrupt {
  id?: string;
  value?: unknown;
}

function firstText(raw: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = raw[key];
    if (typeof value === "string" && value.trim()) return value.trim();
  }
  return undefined;
}

function asJson(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > MAX_JSON_QUESTION ? `${text.slice(0, MAX_JSON_QUESTION)}…` : text;
}

/** The question a pending interrupt asks. */
export function toClarification(interruptId: string, value: unknown): Clarification {
  if (typeof value === "string") return { interruptId, ...normalizeClarification({ question: value }) };
  if (!value || typeof value !== "object" || Array.isArray(value)) return { interruptId, question: asJson(value), options: [] };
  const raw = value as Record<string, unknown>;
  const requests = approvalRequests(value);
  if (requests) return { interruptId, question: approvalQuestion(requests), options: [], approval: { requests } };
  if (typeof raw.question === "string" || Array.isArray(raw.options)) {
    const kind = raw.kind ?? raw.clarification_type;
    return { interruptId, ...normalizeClarification({ ...raw, kind }) };
  }
  const text = firstText(raw, ["message", "description"]);
  return { interruptId, question: text ?? asJson(value), options: [] };
}

/** Every open interrupt among a state's pending tasks, in task order. */
export function pendingInterrupts(
  tasks: ReadonlyArray<{ interrupts?: ReadonlyArray<PendingInterrupt> }> | undefined,
): PendingInterrupt[] {
  return (tasks ?? []).flatMap((task) => (task.interrupts ?? []).filter((i) => i.value !== undefined));
}

/**
 * The resume value for an answer. With one interrupt open the answer resumes it; with several,
 * it answers the one asked (`interruptId`, else the first) by id, and the others stay open: they
 * are asked next. An approval's answer becomes the middleware's `{ decisions }` (see
 * `approvalResume`); throws an `approval_invalid` AntlerError when it does not fit.
 */
export function resumeValue(
  pending: readonly PendingInterrupt[],
  answer: string | ApprovalAnswer,
  interruptId?: string,
): unknown {
  const asked = (pending.length < 2 ? undefined : pending.find((p) => interruptId && p.id === interruptId)) ?? pending[0];
  const value = answerFor(asked?.value, answer);
  if (pending.length < 2) return value;
  return asked?.id ? { [asked.id]: value } : value;
}

function answerFor(interruptValue: unknown, answer: string | ApprovalAnswer): unknown {
  const requests = approvalRequests(interruptValue);
  if (requests) return approvalResume(requests, answer);
  if (typeof answer === "string") return answer;
  throw new AntlerError("approval_invalid", "The open question is not a tool approval; answer it with text.");
}

// ---------------------------------------------------------------------------------------------
// Tool approval (langchain's humanInTheLoopMiddleware and any graph using its shape)

const DECISION_TYPES: readonly DecisionType[] = ["approve", "edit", "reject"];

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

/** The requests of an interrupt value with the human-in-the-loop shape; undefined for any other value. */
export function approvalRequests(value: unknown): ApprovalRequest[] | undefined {
  if (!isRecord(value) || !Array.isArray(value.actionRequests) || !Array.isArray(value.reviewConfigs)) return undefined;
  const configs = value.reviewConfigs.filter(isRecord);
  return value.actionRequests.filter(isRecord).map((action, i) => {
    const name = typeof action.name === "string" ? action.name : "";
    // Matched by position, as the middleware writes them; by name when the lists do not line up.
    const config = configs[i]?.actionName === name ? configs[i] : configs.find((c) => c.actionName === name);
    const allowed = Array.isArray(config?.allowedDecisions)
      ? DECISION_TYPES.filter((d) => (config.allowedDecisions as unknown[]).includes(d))
      : [];
    const request: ApprovalRequest = { name, args: isRecord(action.args) ? action.args : {}, allowed };
    if (typeof action.description === "string") request.description = action.description;
    if (config?.argsSchema !== undefined) request.argsSchema = config.argsSchema;
    return request;
  });
}

/** A one-line summary of the calls waiting for approval. */
function approvalQuestion(requests: readonly ApprovalRequest[]): string {
  const names = [...new Set(requests.map((r) => r.name))].join(", ");
  return requests.length === 1 ? `Approve the tool call ${names}?` : `Approve ${requests.length} tool calls: ${names}?`;
}

function invalid(message: string): AntlerError {
  return new AntlerError("approval_invalid", message);
}

/**
 * The middleware's resume value `{ decisions }` for an answer to `requests`. A text rejects every
 * call with the text as its message (the model reads what the person wrote).
 */
export function approvalResume(requests: readonly ApprovalRequest[], answer: string | ApprovalAnswer): unknown {
  const decisions: Decision[] =
    typeof answer === "string"
      ? requests.map(() => ({ type: "reject", ...(answer.trim() ? { message: answer.trim() } : {}) }))
      : (answer.decisions ?? []);
  if (decisions.length !== requests.length) {
    throw invalid(`Expected ${requests.length} decision(s), one per tool call, got ${decisions.length}.`);
  }
  return { decisions: decisions.map((d, i) => wireDecision(d, requests[i] as ApprovalRequest)) };
}

function wireDecision(decision: Decision, request: ApprovalRequest): unknown {
  if (!request.allowed.includes(decision.type)) {
    throw invalid(`"${decision.type}" is not allowed for ${request.name}; allowed: ${request.allowed.join(", ")}.`);
  }
  if (decision.type === "edit") {
    if (!isRecord(decision.args)) throw invalid(`The edited arguments of ${request.name} must be an object.`);
    return { type: "edit", editedAction: { name: request.name, args: decision.args } };
  }
  if (decision.type === "reject") return decision.message ? { type: "reject", message: decision.message } : { type: "reject" };
  return { type: "approve" };
}
