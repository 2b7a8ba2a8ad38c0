/**
 * Guardrails: every tool call is checked before it runs, against the allow and deny lists
 * (guardrails/rules.ts), then a policy of your own (guardrails/policy.ts). A refused call does
 * not run: the model reads a tool result that says why, and the run goes on. `ask_clarification`
 * is never refused (it is how the agent asks). A policy that throws refuses the call unless
 * `failClosed` is false. The log gets the tool and the reason, never the arguments.
 */
import { ToolMessage } from "@langchain/core/messages";
import { isGraphBubbleUp } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import type { Logger } from "../../log/logger.js";
import { askPolicy, type PolicyLike } from "../guardrails/policy.js";
import { checkRules, type GuardedCall, type GuardrailRules, type Verdict } from "../guardrails/rules.js";
import { ASK_CLARIFICATION } from "../tools/clarification.js";
import type { AntlerRunContext } from "./dynamic-context.js";

export const GUARDRAILS = "Guardrails";

export interface GuardrailsOptions extends GuardrailRules {
  /** Asked about each call the lists let through. */
  policy?: PolicyLike;
  /** A policy that throws refuses the call (default) or, when false, lets it run. */
  failClosed?: boolean;
  logger?: Logger;
}

/** What the model reads instead of the tool's result. */
export function refusalText(tool: string, reason: string): string {
  return `Refused by policy: ${tool} was not run. ${reason} Do not retry it another way; go on without it, or tell the user it is not allowed.`;
}

export function guardrailsMiddleware(options: GuardrailsOptions) {
  const { policy, failClosed = true, logger } = options;
  const decide = async (call: GuardedCall): Promise<Verdict> => {
    const listed = checkRules(options, call);
    if (!listed.allow || !policy) return listed;
    try {
      return await askPolicy(policy, call);
    } catch (err) {
      if (isGraphBubbleUp(err)) throw err;
      logger?.warn({ err, tool: call.tool, fail_closed: failClosed }, "the guardrails policy failed");
      return failClosed ? { allow: false, reason: "The policy could not check this call." } : { allow: true };
    }
  };
  return createMiddleware({
    name: GUARDRAILS,
    wrapToolCall: async (request, handler) => {
      const { toolCall, runtime } = request;
      if (toolCall.name === ASK_CLARIFICATION) return handler(request);
      const context = runtime.context as AntlerRunContext | undefined;
      const threadId = (runtime as { configurable?: { thread_id?: string } }).configurable?.thread_id;
      const verdict = await decide({
        tool: toolCall.name,
        args: (toolCall.args ?? {}) as Record<string, unknown>,
        ...(toolCall.id ? { id: toolCall.id } : {}),
        ...(threadId ? { threadId } : {}),
        user: identityKeys(context),
      });
      if (verdict.allow) return handler(request);
      logger?.info({ tool: toolCall.name, reason: verdict.reason, thread_id: threadId }, "guardrails refused a tool call");
      return new ToolMessage({
        content: refusalText(toolCall.name, verdict.reason),
        tool_call_id: toolCall.id ?? "",
        name: toolCall.name,
        status: "error",
      });
    },
  });
}

/** The identity keys of the run's context (embedded and graph runs put them there, dynamic-context.ts). */
function identityKeys(context: AntlerRunContext | undefined) {
  const out: GuardedCall["user"] = {};
  for (const key of ["user_id", "channel_user_id", "channel_name", "chat_type"] as const) {
    const value = context?.[key];
    if (typeof value === "string") out[key] = value;
  }
  return out;
}
