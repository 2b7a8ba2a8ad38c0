/**
 * Tool approval in the chat. When a run pauses on tool calls that need a person's decision
 * (`agent.approvals`), each call gets its own message: the tool's name and a safely truncated
 * summary of its arguments, with Approve, Reject and (where allowed) Edit buttons. Each call is
 * decided on its own; the run resumes once every call has a decision.
 *
 * - Who decides: the person whose message started the run, the channel's `approvers`, and the
 *   rule's `approvers`. Anyone else is refused (privately where the platform can) and nothing
 *   changes.
 * - By text (for channels without buttons, and always): `approve`, `reject <reason>`, or, after
 *   Edit, the new arguments as JSON. `approve` and `reject` decide every call still open.
 * - Edit: the next message of whoever clicked Edit is the arguments, checked against the tool's
 *   schema; invalid ones get the reason and Edit stays open.
 * - A call still open after the rule's `timeout_ms` is rejected, with a reason the model reads;
 *   the deadline is stored, so it holds across a restart.
 * - After a decision, the call's message shows the outcome and who decided, without buttons.
 *
 * The state lives with the pending question (`PendingQuestion.approval`) as JSON, written and
 * read back typed (`withApproval`, `approvalOf`).
 */
import type { Json, PendingQuestion } from "../bindings/types.js";
import { literalMarkdown, longestRun } from "../channels/markdown/index.js";
import type { Channel, MessageHandle, OutboundContent } from "../channels/types.js";
import type { ApprovalRequest, Decision, DecisionType } from "../harness/types.js";
import { count, handleFromJson, isObject, present, text, toJson } from "./stored.js";

/** The stored state of one approval: its calls, the decisions so far, and its deadline. */
export interface ApprovalState {
  requests: ApprovalRequest[];
  /** One per request; null while it is open. */
  decisions: (Decision | null)[];
  /** Who decided each request (a name or an id); null while it is open or when the deadline did. */
  decidedBy: (string | null)[];
  /** The message of each request, to show its outcome on; null where it could not be posted. */
  posted: (MessageHandle | null)[];
  /** When open calls are rejected (ms since epoch). */
  deadline: number;
  /** The configured wait (`timeout_ms`), as the timeout notice states it; absent in approvals stored by older versions. */
  waitMs?: number;
  /** User ids who may decide besides the asker and the channel's approvers. */
  approvers: string[];
  /** Set after Edit: whose next message holds the new arguments, for which call. */
  editing?: { index: number; userId: string };
}

/** The most characters of arguments a call's message shows. */
const MAX_ARGS_SHOWN = 700;

const LABELS: Record<DecisionType, string> = { approve: "Approve", reject: "Reject", edit: "Edit" };

/** The approval stored with `pending`; undefined for a plain question. */
export function approvalOf(pending: PendingQuestion): ApprovalState | undefined {
  const stored = pending.approval;
  if (!isObject(stored)) return undefined;
  const list = (key: string): Json[] => {
    const v = stored[key];
    return Array.isArray(v) ? v : [];
  };
  const editing = isObject(stored.editing) ? stored.editing : undefined;
  const index = editing && count(editing, "index");
  const userId = editing && text(editing, "userId");
  return present({
    requests: list("requests").map(requestFromJson),
    decisions: list("decisions").map(decisionFromJson),
    decidedBy: list("decidedBy").map((v) => (typeof v === "string" ? v : null)),
    posted: list("posted").map((v) => handleFromJson(v) ?? null),
    deadline: count(stored, "deadline") ?? 0,
    waitMs: count(stored, "waitMs"),
    approvers: list("approvers").filter((v): v is string => typeof v === "string"),
    editing: index !== undefined && userId !== undefined ? { index, userId } : undefined,
  });
}

export function withApproval(pending: PendingQuestion, state: ApprovalState): PendingQuestion {
  return { ...pending, approval: toJson(state) ?? null };
}

const DECISION_TYPES: readonly DecisionType[] = ["approve", "edit", "reject"];

function requestFromJson(value: Json): ApprovalRequest {
  const o = isObject(value) ? value : {};
  const offered = Array.isArray(o.allowed) ? o.allowed : [];
  return present({
    name: text(o, "name") ?? "",
    args: isObject(o.args) ? o.args : {},
    description: text(o, "description"),
    allowed: offered.filter((t): t is DecisionType => DECISION_TYPES.some((d) => d === t)),
    argsSchema: o.argsSchema,
  });
}

function decisionFromJson(value: Json): Decision | null {
  if (!isObject(value)) return null;
  if (value.type === "approve") return { type: "approve" };
  if (value.type === "edit") return { type: "edit", args: isObject(value.args) ? value.args : {} };
  if (value.type !== "reject") return null;
  const message = text(value, "message");
  return message === undefined ? { type: "reject" } : { type: "reject", message };
}

/** The arguments as indented JSON, cut to a readable length. */
export function summarizeArgs(args: Record<string, unknown>): string {
  let text: string;
  try {
    text = JSON.stringify(args, null, 2) ?? "{}";
  } catch {
    text = String(args);
  }
  return text.length > MAX_ARGS_SHOWN ? `${text.slice(0, MAX_ARGS_SHOWN)}\n…` : text;
}

/** The message of one call: name, arguments, and its buttons (or how to answer in words). */
export function requestContent(channel: Channel, request: ApprovalRequest, index: number, questionId: string): OutboundContent {
  const args = summarizeArgs(request.args);
  const fence = "`".repeat(Math.max(3, longestRun(args, "`") + 1));
  // The tool's name is text: a name like `send__mail` must not turn bold.
  const head = `🔧 **${literalMarkdown(request.name)}** wants to run with:\n${fence}json\n${args}\n${fence}`;
  if (channel.capabilities.buttons) {
    const offered = (Object.keys(LABELS) as DecisionType[]).filter((type) => request.allowed.includes(type));
    const buttons = offered.map((type) => ({ id: `${type}:${index}`, label: LABELS[type] }));
    return { text: head, buttons, questionId };
  }
  const edit = request.allowed.includes("edit") ? ', or "edit" and then the new arguments as JSON' : "";
  return { text: `${head}\n_${literalMarkdown(`Reply "approve" or "reject <reason>"${edit}.`)}_` };
}

/** A click on a call's button: what it decides and for which call. */
export function parseButton(buttonId: string): { type: DecisionType; index: number } | undefined {
  const match = /^(approve|reject|edit):(\d+)$/.exec(buttonId);
  if (!match) return undefined;
  return { type: match[1] as DecisionType, index: Number(match[2]) };
}

/** A typed answer: `approve`, `reject <reason>` or `edit`; undefined for anything else. */
export function parseText(text: string): { type: DecisionType; message?: string } | undefined {
  const match = /^\s*(approve|approved|yes|reject|rejected|no|deny|edit)\b[\s:,-]*([\s\S]*)$/i.exec(text);
  if (!match) return undefined;
  const word = match[1]!.toLowerCase();
  const rest = match[2]?.trim() ?? "";
  if (word === "edit") return { type: "edit" };
  if (["approve", "approved", "yes"].includes(word)) return rest ? undefined : { type: "approve" };
  return rest ? { type: "reject", message: rest } : { type: "reject" };
}

/** The line shown on a call's message once decided. */
export function outcomeLine(decision: Decision, by: string | null): string {
  const who = by ? ` by ${by}` : "";
  switch (decision.type) {
    case "approve":
      return `✅ Approved${who}`;
    case "edit":
      return `✏️ Approved with edited arguments${who}`;
    case "reject":
      return `❌ Rejected${who}${decision.message ? `: ${decision.message}` : ""}`;
  }
}

/**
 * A wait as a person would write it: `15 seconds`, `90 seconds`, `2 minutes`, `1 hour 30 minutes`.
 * Under two minutes, or not in whole minutes, it counts seconds (`0.5 seconds` below one).
 */
export function waitText(ms: number): string {
  const unit = (n: number, name: string) => `${n} ${name}${n === 1 ? "" : "s"}`;
  const seconds = ms / 1000;
  if (!Number.isInteger(seconds)) return unit(Number(seconds.toFixed(3)), "second");
  if (seconds < 120) return unit(seconds, "second");
  const parts: string[] = [];
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (hours > 0) parts.push(unit(hours, "hour"));
  if (minutes > 0) parts.push(unit(minutes, "minute"));
  if (seconds % 60 > 0) parts.push(unit(seconds % 60, "second"));
  return parts.join(" ");
}

/** The indexes of the calls still open. */
export function openCalls(state: ApprovalState): number[] {
  return state.decisions.flatMap((d, i) => (d === null ? [i] : []));
}

/** The state with `decision` recorded for call `index`, by `by`. */
export function decide(state: ApprovalState, index: number, decision: Decision, by: string | null): ApprovalState {
  const decisions = [...state.decisions];
  const decidedBy = [...state.decidedBy];
  decisions[index] = decision;
  decidedBy[index] = by;
  const { editing, ...rest } = state;
  return { ...rest, decisions, decidedBy, ...(editing && editing.index !== index ? { editing } : {}) };
}

/** Parses edited arguments typed as JSON; a message when they are not a JSON object. */
export function parseEditedArgs(text: string): Record<string, unknown> | string {
  const body = text
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/```$/, "")
    .trim();
  try {
    const value: unknown = JSON.parse(body);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through to the message below
  }
  return 'The new arguments must be a JSON object, e.g. {"to": "a@example.com"}. Send them again.';
}
