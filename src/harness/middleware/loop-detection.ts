/**
 * Loop detection. A model that keeps making the same tool call with the same arguments is stuck.
 * Within the current turn (since the newest user message) and a window of recent calls: at
 * `warnAt` repeats the next model request carries a warning; at `stopAt` the tool calls of the
 * response are removed, so the run ends, and a short notice tells the user why.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, HumanMessage, isAIMessage, isHumanMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";
import { z } from "zod";

export const LOOP_DETECTION = "LoopDetection";

export const LoopDetectionOptions = z.strictObject({
  /** Repeats of one identical call that trigger a warning to the model. */
  warnAt: z.number().int().min(2).default(3),
  /** Repeats at which tool calls are stripped and the run ends. */
  stopAt: z.number().int().min(2).default(5),
  /** How many recent tool calls are compared. */
  window: z.number().int().min(2).default(20),
});
export type LoopDetectionOptions = z.input<typeof LoopDetectionOptions>;

/** Marks an assistant message written by middleware that the user should see as reply text. */
export const NOTICE_FLAG = "antler_notice";

function callKey(name: string, args: unknown): string {
  return `${name}:${stableJson(args)}`;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Counts of each distinct call among the newest `window` calls of the current turn. */
export function repeatedCalls(messages: readonly BaseMessage[], window: number): Map<string, { name: string; count: number }> {
  const start = messages.findLastIndex((m) => isHumanMessage(m)) + 1;
  const calls = messages
    .slice(start)
    .flatMap((m) => (isAIMessage(m) ? (m.tool_calls ?? []) : []))
    .slice(-window);
  const counts = new Map<string, { name: string; count: number }>();
  for (const call of calls) {
    const key = callKey(call.name, call.args);
    const seen = counts.get(key);
    counts.set(key, { name: call.name, count: (seen?.count ?? 0) + 1 });
  }
  return counts;
}

function worst(counts: Map<string, { name: string; count: number }>) {
  let top: { name: string; count: number } | undefined;
  for (const entry of counts.values()) if (!top || entry.count > top.count) top = entry;
  return top;
}

export function loopDetectionMiddleware(options: LoopDetectionOptions = {}) {
  const { warnAt, stopAt, window } = LoopDetectionOptions.parse(options);
  return createMiddleware({
    name: LOOP_DETECTION,
    wrapModelCall: (request, handler) => {
      const top = worst(repeatedCalls(request.messages, window));
      if (!top || top.count < warnAt) return handler(request);
      const warning = new HumanMessage(
        `[loop detection] You called ${top.name} with the same arguments ${top.count} times. ` +
          "Do not repeat it: use the results you have, try something different, or answer now.",
      );
      return handler({ ...request, messages: [...request.messages, warning] });
    },
    afterModel: (state) => {
      const last = state.messages.at(-1);
      if (!last || !isAIMessage(last) || !last.tool_calls?.length) return undefined;
      const top = worst(repeatedCalls(state.messages, window));
      if (!top || top.count < stopAt) return undefined;
      const { tool_calls: _raw, ...kwargs } = last.additional_kwargs ?? {};
      const stripped = new AIMessage({
        content: last.content,
        id: last.id,
        additional_kwargs: kwargs,
        response_metadata: last.response_metadata,
        usage_metadata: last.usage_metadata,
        tool_calls: [],
      });
      const notice = new AIMessage({
        id: `notice-${randomUUID()}`,
        content: `I stopped because I kept calling ${top.name} with the same arguments without getting anywhere.`,
        response_metadata: { [NOTICE_FLAG]: true },
      });
      return { messages: [stripped, notice] };
    },
  });
}
