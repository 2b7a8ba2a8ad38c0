/**
 * Loop detection. A model that keeps making the same tool call with the same arguments is stuck.
 * Within the current turn (since the newest user message) and a window of recent calls: at
 * `warnAt` repeats the next model request carries a warning; at `stopAt` the tool calls of the
 * response are removed, so the run ends, and a short notice tells the user why.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, HumanMessage, isAIMessage, isHumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { z } from "zod";
import { withToolCalls } from "./tool-calls.js";

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
    // Both checks run inside the model node: an afterModel hook would be a graph step of its
    // own, with a checkpoint of the whole thread, on every model turn.
    wrapModelCall: async (request, handler) => {
      const top = worst(repeatedCalls(request.messages, window));
      const warned =
        top && top.count >= warnAt
          ? {
              ...request,
              messages: [
                ...request.messages,
                new HumanMessage(
                  `[loop detection] You called ${top.name} with the same arguments ${top.count} times. ` +
                    "Do not repeat it: use the results you have, try something different, or answer now.",
                ),
              ],
            }
          : request;
      const response = await handler(warned);
      if (!response.tool_calls?.length) return response;
      const after = worst(repeatedCalls([...request.messages, response], window));
      if (!after || after.count < stopAt) return response;
      const notice = new AIMessage({
        id: `notice-${randomUUID()}`,
        content: `I stopped because I kept calling ${after.name} with the same arguments without getting anywhere.`,
        response_metadata: { [NOTICE_FLAG]: true },
      });
      // The response without its calls replaces the one the model node writes, by id: a response
      // without one gets it here, on the very object the model node writes.
      if (!response.id) {
        response.id = `loop-${randomUUID()}`;
        response.lc_kwargs.id = response.id;
      }
      return new Command({ update: { messages: [withToolCalls(response, []), notice] } });
    },
  });
}
