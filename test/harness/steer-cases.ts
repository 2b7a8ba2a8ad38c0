/**
 * What every backend's `steer` must do (follow-up mode `steer`), run against each backend by its
 * own test file. The subject's agent has the `wait` tool (src/testing/tools.ts) on the mock model.
 *
 * - A message steered while the tool runs reaches the model's next call, as a user message after
 *   the tool's result; the run ends with one reply, which answers it; `steer` resolves `taken`.
 * - A message steered while the model streams its final answer is `missed` and changes nothing.
 * - With no run going, `steer` is `missed` at once.
 * - Two messages steered into one run are taken in the order given.
 */
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Harness, RunEvent } from "../../src/harness/types.js";
import { type ChatCompletionRequest, contentText, lastUserText, type MockModel } from "../fakes/openai.js";
import { collect, last } from "./helpers.js";

export interface SteerSubject {
  harness: Harness;
  mock: MockModel;
  close(): Promise<void>;
}

export interface SteerCaseOptions {
  /**
   * The backend cannot stop its agent between steps (a LangGraph server starts the next model
   * call right after the tools step): the call it started before the switch may be recorded,
   * cut, before the one that reads the steered message.
   */
  cutCall?: boolean;
  /** How long the slow tool call waits. */
  toolMs?: number;
}

/** Roles and texts of a request, as `role:text` (tool results as `tool:<text>`). */
function transcript(req: ChatCompletionRequest): string[] {
  return req.messages
    .filter((m) => m.role !== "system")
    .map((m) =>
      m.tool_calls?.length
        ? `${m.role}:calls ${m.tool_calls.map((c) => c.function.name)}`
        : `${m.role}:${contentText(m.content)}`,
    );
}

/** A run's events, calling `act` once, at the first event `when` matches. */
async function runWith(events: AsyncIterable<RunEvent>, when: (e: RunEvent) => boolean, act: () => void) {
  const seen: RunEvent[] = [];
  let acted = false;
  for await (const e of events) {
    seen.push(e);
    if (!acted && when(e)) {
      acted = true;
      act();
    }
  }
  return seen;
}

export function steerCases(label: string, start: () => Promise<SteerSubject>, options: SteerCaseOptions = {}): void {
  const toolMs = options.toolMs ?? 800;

  describe(`steer: ${label}`, () => {
    let s: SteerSubject;
    let thread: string;

    beforeEach(async () => {
      s = await start();
      thread = randomUUID();
      // A model that answers "ok: <the newest user message>"; the call a server cuts is slow to start.
      s.mock.setDefault((req) => ({
        text: `ok: ${lastUserText(req)}`,
        firstByteMs: lastUserText(req) === "check prod" ? 1500 : 0,
      }));
    });

    afterEach(async () => {
      await s.close();
    });

    /** The first request that reads `text`, and how many came before it. */
    function readerOf(text: string) {
      const at = s.mock.requests.findIndex((r) => r.messages.some((m) => m.role === "user" && contentText(m.content) === text));
      return { at, request: s.mock.requests[at] };
    }

    it("a message steered while a tool runs reaches the model's next call, after the tool result, and the one reply answers it", async () => {
      s.mock.enqueue({ toolCalls: [{ name: "wait", args: { ms: toolMs } }] });
      let steered: Promise<string> | undefined;
      const events = await runWith(
        s.harness.run(thread, "check prod", { steerable: true }),
        (e) => e.type === "tool_start",
        () => {
          steered = s.harness.steer?.(thread, "also check staging");
        },
      );
      expect(await steered).toBe("taken");
      expect(last(events)).toMatchObject({ type: "done" });
      expect(events.filter((e) => e.type === "done")).toHaveLength(1);
      const done = last(events) as Extract<RunEvent, { type: "done" }>;
      expect(done.text).toContain("ok: also check staging");
      expect(done.text).not.toContain("ok: check prod");

      const { at, request } = readerOf("also check staging");
      expect(request, JSON.stringify(s.mock.requests.map(transcript))).toBeDefined();
      if (!options.cutCall) expect(at).toBe(1);
      expect(transcript(request as ChatCompletionRequest)).toEqual([
        "user:check prod",
        "assistant:calls wait",
        `tool:waited ${toolMs} ms`,
        "user:also check staging",
      ]);
      // The reply came from that call, and no call came after it.
      expect(s.mock.requests.length).toBe(at + 1);

      const history = (await s.harness.history?.(thread)) ?? [];
      expect(history.map((h) => `${h.role}:${h.text}`)).toEqual([
        "user:check prod",
        "user:also check staging",
        "assistant:ok: also check staging",
      ]);
    });

    it("a message steered while the model streams its final answer is missed and the run is unchanged", async () => {
      const answer = "The deploy to prod went fine, nothing else to do.";
      s.mock.enqueue({ text: answer, chunkSize: 2, delayMs: 25 });
      let steered: Promise<string> | undefined;
      const events = await runWith(
        s.harness.run(thread, "deploy", { steerable: true }),
        (e) => e.type === "text",
        () => {
          steered = s.harness.steer?.(thread, "also check staging");
        },
      );
      expect(await steered).toBe("missed");
      expect(last(events)).toMatchObject({ type: "done", text: answer });
      expect(s.mock.requests).toHaveLength(1);
      const history = (await s.harness.history?.(thread)) ?? [];
      expect(history.map((h) => `${h.role}:${h.text}`)).toEqual(["user:deploy", `assistant:${answer}`]);
    });

    it("steer with no run going is missed at once", async () => {
      expect(await s.harness.steer?.(thread, "anyone there?")).toBe("missed");
      expect(last(await collect(s.harness.run(thread, "hello")))).toMatchObject({ type: "done", text: "ok: hello" });
      expect(await s.harness.steer?.(thread, "still there?")).toBe("missed");
    });

    it("two messages steered into one run are taken in the order given", async () => {
      s.mock.enqueue({ toolCalls: [{ name: "wait", args: { ms: toolMs } }] });
      const steered: Array<Promise<string> | undefined> = [];
      const events = await runWith(
        s.harness.run(thread, "check prod", { steerable: true }),
        (e) => e.type === "tool_start",
        () => {
          steered.push(s.harness.steer?.(thread, "first: staging"), s.harness.steer?.(thread, "second: dev"));
        },
      );
      expect(await Promise.all(steered)).toEqual(["taken", "taken"]);
      expect(last(events)).toMatchObject({ type: "done", text: expect.stringContaining("ok: second: dev") });
      const { request } = readerOf("first: staging");
      expect(transcript(request as ChatCompletionRequest).slice(-3)).toEqual([
        `tool:waited ${toolMs} ms`,
        "user:first: staging",
        "user:second: dev",
      ]);
    });
  });
}
