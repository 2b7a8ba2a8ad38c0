/**
 * The built-in tool-call policy: allow and deny lists of rules. A rule names a tool (a name, or
 * a glob where `*` matches any run of characters) and may add argument patterns, all of which
 * must match: a glob matches the whole value, `/regex/flags` matches anywhere in it. A string
 * argument is matched as it is, any other value as its JSON; a missing argument matches nothing.
 * Deny wins over allow; with an allow list, a call no allow rule matches is refused.
 */
import { REGEX_FORM } from "../../config/guardrails.js";
import type { RunIdentity } from "../middleware/dynamic-context.js";

/** One rule of an allow or deny list. */
export interface ToolRule {
  /** A tool name, or a glob (`run_*`, `*`). */
  tool: string;
  /** Argument name → patterns (any may match); every named argument must match. */
  args?: Readonly<Record<string, string | readonly string[]>>;
  /** What the model reads when this rule refuses a call. */
  reason?: string;
}

export interface GuardrailRules {
  /** When given, only the calls one of these rules matches may run. */
  allow?: readonly ToolRule[];
  /** The calls one of these rules matches never run. */
  deny?: readonly ToolRule[];
}

/** One tool call, as a policy is asked about it. */
export interface GuardedCall {
  tool: string;
  args: Record<string, unknown>;
  /** The tool call's id. */
  id?: string;
  /** The thread of the run. */
  threadId?: string;
  /** Who the run serves (`user_id`, `channel_user_id`, `channel_name`, `chat_type`), when a person does. */
  user: RunIdentity;
}

/** A policy's answer: run the call, or refuse it and tell the model why. */
export type Verdict = { allow: true } | { allow: false; reason: string };

export const ALLOWED: Verdict = { allow: true };

/** What the lists say about `call`. */
export function checkRules(rules: GuardrailRules, call: GuardedCall): Verdict {
  const denied = rules.deny?.find((rule) => matches(rule, call));
  if (denied) return { allow: false, reason: denied.reason ?? `The policy does not allow ${describe(denied, call)}.` };
  if (rules.allow && !rules.allow.some((rule) => matches(rule, call))) {
    return { allow: false, reason: `${call.tool} is not allowed here with these arguments.` };
  }
  return ALLOWED;
}

function describe(rule: ToolRule, call: GuardedCall): string {
  const names = Object.keys(rule.args ?? {});
  return names.length > 0 ? `${call.tool} with this ${names.join(" and ")}` : call.tool;
}

/** Whether `rule` covers `call`: its tool pattern, and every argument pattern it names. */
export function matches(rule: ToolRule, call: GuardedCall): boolean {
  if (!globMatch(rule.tool, call.tool)) return false;
  for (const [name, patterns] of Object.entries(rule.args ?? {})) {
    if (!Object.hasOwn(call.args, name)) return false;
    const value = call.args[name];
    const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
    const list = typeof patterns === "string" ? [patterns] : patterns;
    if (!list.some((p) => patternMatch(p, text))) return false;
  }
  return true;
}

/** A `/regex/flags` pattern found anywhere in `text`, or a glob matching all of it. */
export function patternMatch(pattern: string, text: string): boolean {
  const regex = REGEX_FORM.exec(pattern);
  if (regex) return new RegExp(regex[1] ?? "", (regex[2] ?? "").replace(/[gy]/g, "")).test(text);
  return globMatch(pattern, text);
}

const compiled = new Map<string, RegExp>();

/** `*` matches any run of characters (newlines too); everything else is literal. */
function globMatch(glob: string, text: string): boolean {
  let re = compiled.get(glob);
  if (!re) {
    const body = glob
      .split("*")
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("[\\s\\S]*");
    re = new RegExp(`^${body}$`);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(glob, re);
  }
  return re.test(text);
}
