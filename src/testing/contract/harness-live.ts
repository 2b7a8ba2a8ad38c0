/**
 * The harness contract's checks of what a run shows while it works and how it meets a follow-up
 * that cut it off: a tool's progress, the model's reasoning (never reply text), and a run that
 * starts after an interrupted one (`RunOptions.interrupted`). harness.ts runs them with the rest.
 * The progress check needs `progressTool()` (tools.ts) among the agent's tools.
 */
import { expect } from "vitest";
import { CUT_OFF_MARK } from "../../harness/cut-off.js";
import type { Harness, RunEvent } from "../../harness/types.js";
import type { MockModel } from "../mock-model.js";
import { collect, deltas, last, runUntil } from "../runs.js";
import { PROGRESS_TOOL, progressText } from "../tools.js";

interface Current {
  h: Harness;
  mock: MockModel;
  thread: string;
}

/** The newest model request's conversation, as `role:content` lines. */
function seenByModel(mock: MockModel): string[] | undefined {
  return mock.requests
    .at(-1)
    ?.messages.filter((m) => m.role !== "system")
    .map((m) => `${m.role}:${m.tool_call_id ?? m.content}`);
}

export async function reportsToolProgress({ h, mock, thread }: Current): Promise<void> {
  const call = { name: PROGRESS_TOOL, id: "call_steps", args: { steps: 3, delay_ms: 30 } };
  mock.enqueue({ text: "Starting.", toolCalls: [call] }, { text: "All three steps ran." });
  const events = await collect(h.run(thread, "run the job"));
  const start = events.findIndex((e) => e.type === "tool_start" && e.id === "call_steps");
  const end = events.findIndex((e) => e.type === "tool_end" && e.id === "call_steps");
  const progress = events.flatMap((e, i) => (e.type === "progress" ? [{ i, e }] : []));
  expect(progress.map((p) => p.e)).toEqual(
    [1, 2, 3].map((step) => ({ type: "progress", text: progressText(step, 3), id: "call_steps" })),
  );
  expect(start).toBeGreaterThanOrEqual(0);
  expect(progress.every((p) => p.i > start && p.i < end)).toBe(true);
  expect(last(events)).toMatchObject({ type: "done", text: "Starting.\n\nAll three steps ran." });
}

export async function streamsReasoningApart({ h, mock, thread }: Current): Promise<void> {
  const reasoning = "The user greets me; a short greeting back will do.";
  mock.enqueue({ reasoning, text: "Hello there.", chunkSize: 5 });
  const events = await collect(h.run(thread, "hi"));
  const thoughts = events.flatMap((e) => (e.type === "reasoning" ? [e.delta] : []));
  expect(thoughts.length).toBeGreaterThan(1);
  expect(thoughts.join("")).toBe(reasoning);
  const firstText = events.findIndex((e) => e.type === "text");
  expect(events.findLastIndex((e) => e.type === "reasoning")).toBeLessThan(firstText);
  expect(deltas(events).join("")).toBe("Hello there.");
  expect(last(events)).toMatchObject({ type: "done", text: "Hello there." });
}

export async function showsTheCutOffReply({ h, mock, thread }: Current): Promise<void> {
  const partial = "Here is the first half of an answ";
  const events = await collect(h.run(thread, "no, the other file", { interrupted: partial }));
  expect(last(events)).toMatchObject({ type: "done", text: "ok: no, the other file" });
  expect(seenByModel(mock)).toEqual([`assistant:${partial}\n\n${CUT_OFF_MARK}`, "user:no, the other file"]);
  expect((await h.history?.(thread))?.map((e) => [e.role, e.text])).toEqual([
    ["assistant", partial],
    ["user", "no, the other file"],
    ["assistant", "ok: no, the other file"],
  ]);
}

export async function continuesAfterAnInterrupt({ h, mock, thread }: Current): Promise<void> {
  mock.enqueue({ text: "a long answer that keeps streaming for quite a while yet", chunkSize: 2, delayMs: 40 });
  let texts = 0;
  const first = await runUntil(
    h.run(thread, "talk"),
    (e: RunEvent) => e.type === "text" && ++texts === 3,
    () => h.cancel(thread),
  );
  expect(last(first)).toMatchObject({ type: "error", code: "cancelled" });
  const partial = deltas(first).join("");
  const second = await collect(h.run(thread, "stop, answer this", { interrupted: partial }));
  expect(last(second)).toMatchObject({ type: "done", text: "ok: stop, answer this" });
  // The partial the stopped run kept is marked, not written twice.
  expect(seenByModel(mock)).toEqual(["user:talk", `assistant:${partial}\n\n${CUT_OFF_MARK}`, "user:stop, answer this"]);
  expect((await h.history?.(thread))?.map((e) => [e.role, e.text])).toEqual([
    ["user", "talk"],
    ["assistant", partial],
    ["user", "stop, answer this"],
    ["assistant", "ok: stop, answer this"],
  ]);
}
