/**
 * Token budgets: limits on one run's tool calls and tokens (`max_tool_calls_per_run`,
 * `max_tokens_per_run`). A run is counted from the user's newest message in the thread (an
 * answered question goes on counting; a new or steered message starts again): its tool calls
 * (`ask_clarification` aside) and the tokens its model turns reported (`usage_metadata`).
 *
 * - Near a limit (`warnAt`, 80% by default) each model request carries a note asking the model
 *   to wrap up.
 * - A response whose tool calls would pass the call limit keeps those that fit; the rest never
 *   run.
 * - Once a limit is reached, the next request tells the model to answer now, and any tool calls
 *   it still makes are dropped, so the run ends with its answer.
 *
 * When calls were dropped, the response is marked (`LIMIT_FLAG` in its metadata) and the run's
 * `done` event carries the limit, so the chat gets a notice after the reply. Dropped calls never
 * reach the thread: no call is left without a result. Everything happens inside the model node
 * (no graph step of its own), and nothing is kept between calls: the counts come from the state.
 */
import { type BaseMessage, HumanMessage, isAIMessage, isHumanMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";
import { z } from "zod";
import { ASK_CLARIFICATION } from "../tools/clarification.js";
import type { RunLimit } from "../types.js";
import { withToolCalls } from "./tool-calls.js";

export const TOKEN_BUDGET = "TokenBudget";

/** Marks (in `response_metadata`) a model response whose tool calls a limit dropped; the value is the `RunLimit`. */
export const LIMIT_FLAG = "antler_limit";

export const RunBudget = z.strictObject({
  /** Tool calls one run may make. */
  maxToolCalls: z.number().int().positive().optional(),
  /** Tokens (input and output, as the model reports them) one run may use. */
  maxTokens: z.number().int().positive().optional(),
  /** Share of a limit from which the model is asked to wrap up. */
  warnAt: z.number().gt(0).max(1).default(0.8),
});
export type RunBudget = z.input<typeof RunBudget>;

interface Spent {
  tool_calls: number;
  tokens: number;
}

const UNITS: Record<RunLimit["kind"], string> = { tool_calls: "tool calls", tokens: "tokens" };

const isCall = (c: { name: string }) => c.name !== ASK_CLARIFICATION;

/** The tool calls and tokens of the run so far: everything after the newest user message. */
export function spentInRun(messages: readonly BaseMessage[]): Spent {
  const start = messages.findLastIndex((m) => isHumanMessage(m)) + 1;
  const spent: Spent = { tool_calls: 0, tokens: 0 };
  for (const m of messages.slice(start)) {
    if (!isAIMessage(m)) continue;
    spent.tool_calls += (m.tool_calls ?? []).filter(isCall).length;
    spent.tokens += m.usage_metadata?.total_tokens ?? 0;
  }
  return spent;
}

const amount = (n: number) => n.toLocaleString("en-US");

export function tokenBudgetMiddleware(budget: RunBudget) {
  const { maxToolCalls, maxTokens, warnAt } = RunBudget.parse(budget);
  const limits: RunLimit[] = [
    ...(maxToolCalls ? [{ kind: "tool_calls" as const, max: maxToolCalls }] : []),
    ...(maxTokens ? [{ kind: "tokens" as const, max: maxTokens }] : []),
  ];
  /** The limit `spent` is closest to (as a share), with that share. */
  const nearest = (spent: Spent) =>
    limits.map((limit) => ({ limit, share: spent[limit.kind] / limit.max })).sort((a, b) => b.share - a.share)[0];
  return createMiddleware({
    name: TOKEN_BUDGET,
    wrapModelCall: async (request, handler) => {
      const spent = spentInRun(request.state.messages);
      const top = nearest(spent);
      const reached = top && top.share >= 1 ? top.limit : undefined;
      let note: string | undefined;
      if (reached) {
        note =
          `[limit] This request has used its limit of ${amount(reached.max)} ${UNITS[reached.kind]}. No more tool calls will run: ` +
          "answer now with what you have, and say what is left undone.";
      } else if (top && top.share >= warnAt) {
        note =
          `[limit] This request has used ${amount(spent[top.limit.kind])} of its ${amount(top.limit.max)} ${UNITS[top.limit.kind]}. ` +
          "Wrap up: make only the tool calls you really need, then answer.";
      }
      const response = await handler(note ? { ...request, messages: [...request.messages, new HumanMessage(note)] } : request);
      const calls = response.tool_calls ?? [];
      const room = reached ? 0 : maxToolCalls ? maxToolCalls - spent.tool_calls : Number.POSITIVE_INFINITY;
      if (calls.filter(isCall).length <= room) return response;
      let kept = 0;
      const keep = calls.filter((c) => !isCall(c) || kept++ < room);
      const limit: RunLimit = reached ?? { kind: "tool_calls", max: maxToolCalls ?? 0 };
      return withToolCalls(response, keep, { [LIMIT_FLAG]: limit });
    },
  });
}

/** The limit a message was marked with, if any. */
export function limitOf(message: BaseMessage): RunLimit | undefined {
  const value = (message.response_metadata as Record<string, unknown> | undefined)?.[LIMIT_FLAG];
  if (!value || typeof value !== "object") return undefined;
  const { kind, max } = value as Partial<RunLimit>;
  return (kind === "tool_calls" || kind === "tokens") && typeof max === "number" ? { kind, max } : undefined;
}
