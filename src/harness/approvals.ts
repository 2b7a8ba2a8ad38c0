/**
 * Tool approval: `agent.approvals` (tool names or globs → the decisions a person may make) as
 * langchain's `humanInTheLoopMiddleware`. That middleware pauses a model turn whose tool calls
 * need approval with one interrupt `{ actionRequests, reviewConfigs }` and resumes on
 * `{ decisions }`; interrupts.ts turns both ends into the harness contract's shapes.
 *
 * The middleware takes exact tool names. The embedded agent knows its tools when it is built, so
 * its globs are resolved then (`approvalMiddleware(rules, toolNames)`); a user's graph factory
 * gets a middleware that resolves them per model turn, from the names the model called.
 */
import { type AgentMiddleware, createMiddleware, humanInTheLoopMiddleware, type InterruptOnConfig } from "langchain";
import type { ApprovalDecision } from "../config/schema.js";
import { ASK_CLARIFICATION } from "./tools/clarification.js";

/** Name of the approval middleware in a chain (langchain's own). */
export const TOOL_APPROVAL = "HumanInTheLoopMiddleware";

/** What the harness reads of one `agent.approvals` entry; the chat layer reads the rest. */
export interface ApprovalRuleLike {
  decisions: readonly ApprovalDecision[];
}

/** `agent.approvals`: tool name or glob → its rule. Key order matters: the first matching glob wins. */
export type ApprovalRules = Readonly<Record<string, ApprovalRuleLike>>;

function globToRegExp(glob: string): RegExp {
  const body = glob
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`);
}

/**
 * The rule that governs `toolName`: its exact entry, else the first glob (in key order) that
 * matches it. `ask_clarification` never needs approval: it is how the agent asks.
 */
export function approvalRuleFor<R extends ApprovalRuleLike>(rules: Readonly<Record<string, R>>, toolName: string): R | undefined {
  if (toolName === ASK_CLARIFICATION) return undefined;
  if (Object.hasOwn(rules, toolName)) return rules[toolName];
  for (const [key, rule] of Object.entries(rules)) {
    if (key.includes("*") && globToRegExp(key).test(toolName)) return rule;
  }
  return undefined;
}

/** The middleware's `interruptOn` for these tools: one exact entry per tool that needs approval. */
export function resolveInterruptOn(rules: ApprovalRules, toolNames: Iterable<string>): Record<string, InterruptOnConfig> {
  const interruptOn: Record<string, InterruptOnConfig> = {};
  for (const name of toolNames) {
    const rule = approvalRuleFor(rules, name);
    if (rule) interruptOn[name] = { allowedDecisions: [...rule.decisions] };
  }
  return interruptOn;
}

/**
 * The approval middleware for `rules`, or undefined when there are none. With `toolNames` the
 * globs are resolved now (the embedded agent); without, on each model turn against the tools the
 * model called (a user's graph, whose tools Antler does not see). Both pause and resume alike.
 */
export function approvalMiddleware(rules: ApprovalRules, toolNames?: Iterable<string>): AgentMiddleware | undefined {
  if (Object.keys(rules).length === 0) return undefined;
  if (toolNames) {
    const interruptOn = resolveInterruptOn(rules, toolNames);
    return Object.keys(interruptOn).length > 0 ? humanInTheLoopMiddleware({ interruptOn }) : undefined;
  }
  return lazyApprovalMiddleware(rules);
}

type AfterModelHook = (state: unknown, runtime: unknown) => unknown;

/** langchain's middleware, built per turn for the tools the last AI message calls. */
function lazyApprovalMiddleware(rules: ApprovalRules): AgentMiddleware {
  return createMiddleware({
    name: TOOL_APPROVAL,
    afterModel: {
      canJumpTo: ["model"],
      hook: async (state, runtime) => {
        const messages = (state as { messages?: Array<{ tool_calls?: Array<{ name: string }> }> }).messages ?? [];
        const lastCalls = [...messages].reverse().find((m) => Array.isArray(m.tool_calls))?.tool_calls ?? [];
        const interruptOn = resolveInterruptOn(
          rules,
          lastCalls.map((c) => c.name),
        );
        if (Object.keys(interruptOn).length === 0) return undefined;
        const inner = humanInTheLoopMiddleware({ interruptOn }).afterModel as { hook: AfterModelHook };
        return inner.hook(state, runtime) as never;
      },
    },
  }) as unknown as AgentMiddleware;
}
