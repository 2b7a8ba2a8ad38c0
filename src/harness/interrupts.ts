/**
 * Interrupts as questions. Whatever a graph passes to `interrupt()` reaches the chat:
 * - the `ask_clarification` shape (`question`, `options`, `kind` or DeerFlow's
 *   `clarification_type`, `context`) becomes a question with buttons;
 * - any other value becomes a question answered in words: its `question`, `message` or
 *   `description`, else its JSON.
 * The same rules serve every backend; the remote one sees the values as plain JSON.
 */
import { normalizeClarification } from "./tools/clarification.js";
import type { Clarification } from "./types.js";

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
 * are asked next.
 */
export function resumeValue(pending: readonly PendingInterrupt[], answer: string, interruptId?: string): unknown {
  if (pending.length < 2) return answer;
  const asked = pending.find((p) => interruptId && p.id === interruptId) ?? pending[0];
  return asked?.id ? { [asked.id]: answer } : answer;
}
