/**
 * The harness contract suite: what every agent backend must do for the chat core, whatever runs
 * the agent (the embedded agent, a user's graph, a LangGraph API server, a `Harness` class of
 * your own). Each backend's test file calls `harnessContract(label, start)`; `start` gives a
 * harness whose agent talks to the mock model (mock-model.ts) and can call `ask_clarification`
 * and `progressTool()`'s `run_steps` (tools.ts).
 * It is published as `antler/testing`, so a backend loaded by `backend: "module:Export"` runs
 * the same checks. A backend may skip a test only by saying why.
 */
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Harness, RunEvent } from "../../harness/types.js";
import type { MockModel } from "../mock-model.js";
import { collect, deltas, last, runUntil } from "../runs.js";
import { continuesAfterAnInterrupt, reportsToolProgress, showsTheCutOffReply, streamsReasoningApart } from "./harness-live.js";

export interface HarnessSubject {
  harness: Harness;
  /** The model behind the agent; its queue is empty when a test starts. */
  mock: MockModel;
  close(): Promise<void>;
}

/** The contract's tests, by the name `skip` takes. */
export type HarnessContractTest = keyof typeof TESTS;

export interface HarnessContractOptions {
  /** Tests this backend skips, each with the reason (required). */
  skip?: Array<{ test: HarnessContractTest; reason: string }>;
}

/** What each test gets: the harness, its mock model, and a fresh thread id. */
interface Current {
  h: Harness;
  mock: MockModel;
  thread: string;
}

const TESTS = {
  stream: "streams text deltas in order and done.text is exactly the reply",
  question: "asks a question with options, and resume continues the run with the answer",
  cancel: "cancel() ends the active run with one cancelled error; the thread stays usable",
  timeout: "a TimeoutError abort ends the run with a timeout error; the thread stays usable",
  repair: "after a failed run, the next run works and keeps the text the user saw",
  busy: "a second run on a busy thread gets a busy error; other threads run",
  thread: "getThread reports the pending question and the history",
  history: "history() reads the conversation back: user, reply, and an answered question with its answer",
  progress: "a tool's progress arrives between its tool_start and tool_end, with its call id",
  reasoning: "the model's reasoning streams as reasoning events, never as reply text",
  interrupted: "a run after a cut-off reply shows the model that reply, marked, before the new message",
  interrupt: "after a cancelled run, the next run marks the kept partial instead of repeating it",
} as const;

function history(mock: MockModel): string[] | undefined {
  return mock.requests
    .at(-1)
    ?.messages.filter((m) => m.role !== "system")
    .map((m) => `${m.role}:${m.tool_call_id ?? m.content}`);
}

export function harnessContract(label: string, start: () => Promise<HarnessSubject>, options: HarnessContractOptions = {}): void {
  for (const s of options.skip ?? []) {
    if (!s.reason?.trim()) throw new Error(`harnessContract(${label}): skipping "${s.test}" needs a reason`);
  }
  const skipped = new Map<string, string>((options.skip ?? []).map((s) => [s.test, s.reason]));

  describe(`harness contract: ${label}`, () => {
    let subject: HarnessSubject | undefined;
    let current: Current;

    beforeEach(async () => {
      subject = await start();
      current = { h: subject.harness, mock: subject.mock, thread: randomUUID() };
    });

    afterEach(async () => {
      await subject?.close();
    });

    for (const [name, title] of Object.entries(TESTS) as Array<[HarnessContractTest, string]>) {
      const fn = () => CHECKS[name](current);
      const reason = skipped.get(name);
      if (reason) it.skip(`${title} (skipped: ${reason})`, fn);
      else it(title, fn);
    }
  });
}

/** Each test's body, by name. */
const CHECKS: Record<HarnessContractTest, (current: Current) => Promise<void>> = {
  stream: streamsTheReply,
  question: asksAndResumes,
  cancel: cancels,
  timeout: timesOut,
  repair: repairsAfterAFailure,
  busy: refusesABusyThread,
  thread: reportsTheThread,
  history: readsTheHistoryBack,
  progress: reportsToolProgress,
  reasoning: streamsReasoningApart,
  interrupted: showsTheCutOffReply,
  interrupt: continuesAfterAnInterrupt,
};

async function streamsTheReply({ h, mock, thread }: Current): Promise<void> {
  const text = "Antler streams every token, in order: 1, 2, 3 — and ends.";
  mock.enqueue({ text, chunkSize: 3 });
  const events = await collect(h.run(thread, "hi"));
  expect(deltas(events).length).toBeGreaterThan(3);
  expect(deltas(events).join("")).toBe(text);
  expect(last(events)).toMatchObject({ type: "done", text });
}

async function asksAndResumes({ h, mock, thread }: Current): Promise<void> {
  mock.enqueue({
    text: "One thing first.",
    toolCalls: [
      {
        name: "ask_clarification",
        id: "call_ask",
        args: { question: "Which colour?", options: ["Red", "Blue"], kind: "choice" },
      },
    ],
  });
  const first = await collect(h.run(thread, "paint it"));
  expect(deltas(first).join("")).toBe("One thing first.");
  expect(last(first)).toMatchObject({ type: "clarification", question: "Which colour?", options: ["Red", "Blue"] });
  mock.enqueue({ text: "Blue it is." });
  const second = await collect(h.resume(thread, "Blue"));
  expect(last(second)).toMatchObject({ type: "done", text: "Blue it is." });
  expect(mock.requests.at(-1)?.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_ask", content: "Blue" });
  expect(await collect(h.resume(thread, "again"))).toEqual([{ type: "error", code: "no_pending", message: expect.any(String) }]);
}

async function cancels({ h, mock, thread }: Current): Promise<void> {
  expect(h.cancel(thread)).toBe(false);
  mock.enqueue({ text: "a long answer that keeps streaming for quite a while yet", chunkSize: 2, delayMs: 40 });
  let cancelled: boolean | undefined;
  const events = await runUntil(
    h.run(thread, "talk"),
    (e) => e.type === "text",
    () => {
      cancelled = h.cancel(thread);
    },
  );
  expect(cancelled).toBe(true);
  expect(last(events)).toMatchObject({ type: "error", code: "cancelled" });
  expect(deltas(events).join("").length).toBeLessThan(40);
  expect(last(await collect(h.run(thread, "again")))).toMatchObject({ type: "done", text: "ok: again" });
}

async function timesOut({ h, mock, thread }: Current): Promise<void> {
  mock.enqueue({ text: "a slow answer that takes far too long to finish", chunkSize: 2, delayMs: 40 });
  const controller = new AbortController();
  const events = await runUntil(
    h.run(thread, "work", { signal: controller.signal }),
    (e) => e.type === "text",
    () => controller.abort(new DOMException("the run took too long", "TimeoutError")),
  );
  expect(last(events)).toMatchObject({ type: "error", code: "timeout" });
  expect(last(await collect(h.run(thread, "again")))).toMatchObject({ type: "done", text: "ok: again" });
}

async function repairsAfterAFailure({ h, mock, thread }: Current): Promise<void> {
  mock.enqueue({ fault: "disconnect", afterChunks: 2 });
  const events = await collect(h.run(thread, "hello"));
  expect(deltas(events).join("")).toBe("part0 part1 ");
  const failure = last(events);
  expect(failure.type).toBe("error");
  expect(failure.type === "error" && failure.message.length).toBeGreaterThan(10);
  expect(last(await collect(h.run(thread, "again")))).toMatchObject({ type: "done", text: "ok: again" });
  expect(history(mock)).toEqual(["user:hello", "assistant:part0 part1 ", "user:again"]);
}

async function refusesABusyThread({ h, mock, thread }: Current): Promise<void> {
  mock.enqueue({ text: "slow slow slow slow slow", chunkSize: 2, delayMs: 30 });
  const iterator = h.run(thread, "first")[Symbol.asyncIterator]();
  expect((await iterator.next()).value).toMatchObject({ type: "text" });
  expect(await collect(h.run(thread, "second"))).toEqual([{ type: "error", code: "busy", message: expect.any(String) }]);
  expect(last(await collect(h.run(randomUUID(), "other")))).toMatchObject({ type: "done", text: "ok: other" });
  const rest: RunEvent[] = [];
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest.push(next.value);
  expect(last(rest)).toMatchObject({ type: "done", text: "slow slow slow slow slow" });
}

async function reportsTheThread({ h, mock, thread }: Current): Promise<void> {
  expect(await h.getThread(randomUUID())).toBeUndefined();
  mock.enqueue({ toolCalls: [{ name: "ask_clarification", id: "call_q", args: { question: "Which region?" } }] });
  expect(last(await collect(h.run(thread, "deploy")))).toMatchObject({ type: "clarification", options: [] });
  const info = await h.getThread(thread);
  expect(info).toMatchObject({ threadId: thread, running: false, pending: { question: "Which region?", options: [] } });
  expect(info?.messageCount).toBe(2);
}

async function readsTheHistoryBack({ h, mock, thread }: Current): Promise<void> {
  expect(h.history, "the chat core reads threads back with history()").toBeDefined();
  expect(await h.history!(randomUUID())).toEqual([]);
  mock.enqueue({ text: "Paris, **probably**." });
  expect(last(await collect(h.run(thread, "where to?")))).toMatchObject({ type: "done" });
  mock.enqueue(
    {
      toolCalls: [
        { name: "ask_clarification", id: "call_h", args: { question: "Train or plane?", options: ["Train", "Plane"] } },
      ],
    },
    { text: "Train it is." },
  );
  expect(last(await collect(h.run(thread, "book it")))).toMatchObject({ type: "clarification" });
  expect(last(await collect(h.resume(thread, "Train")))).toMatchObject({ type: "done", text: "Train it is." });
  const read = await h.history!(thread);
  expect(read.map((e) => [e.role, e.text])).toEqual([
    ["user", "where to?"],
    ["assistant", "Paris, **probably**."],
    ["user", "book it"],
    ["assistant", "Train or plane?\n\n→ Train"],
    ["assistant", "Train it is."],
  ]);
  expect(new Set(read.map((e) => e.id)).size).toBe(read.length);
  // The same ids on a second read: the page keys its messages by them.
  expect((await h.history!(thread)).map((e) => e.id)).toEqual(read.map((e) => e.id));
}
