/**
 * What a run shows while it works, and the reply a new message cut off: how progress chunks,
 * reasoning and cut-off replies are read (live-events.ts, cut-off.ts), and the embedded agent
 * with two tools reporting side by side, reasoning before a tool call, and the title after an
 * interrupted first run. The harness contract checks the rest on every backend.
 */
import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CUT_OFF_MARK, cutOffMessages, withoutCutOffMark } from "../../src/harness/cut-off.js";
import { PROGRESS_MAX_CHARS, progressOf, reasoningOf } from "../../src/harness/live-events.js";
import { RunTranslator } from "../../src/harness/run-events.js";
import { PROGRESS_TOOL, progressText, progressTool } from "../../src/testing/index.js";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, deltas, last, runUntil, startHarness, type TestHarness } from "./helpers.js";

describe("progress chunks", () => {
  const none = new Set<string>();

  it("takes `{ progress }` and plain strings, flattened to one line and capped", () => {
    expect(progressOf({ progress: "Running tests (2/5)" }, none)).toEqual({ type: "progress", text: "Running tests (2/5)" });
    expect(progressOf("  Searching\n the web…  ", none)).toEqual({ type: "progress", text: "Searching the web…" });
    const long = progressOf({ progress: "x".repeat(500) }, none);
    expect(long?.text).toHaveLength(PROGRESS_MAX_CHARS);
    expect(long?.text.endsWith("…")).toBe(true);
  });

  it("leaves other custom chunks alone", () => {
    for (const chunk of [{ rows: 3 }, { progress: 42 }, { progress: "  " }, ["a"], null, 7]) {
      expect(progressOf(chunk, none)).toBeUndefined();
    }
  });

  it("names the call the chunk names, else the one open call, else none", () => {
    const two = new Set(["call_a", "call_b"]);
    expect(progressOf({ progress: "p", id: "call_b" }, two)).toEqual({ type: "progress", text: "p", id: "call_b" });
    expect(progressOf({ progress: "p", toolCallId: "call_a" }, two)).toMatchObject({ id: "call_a" });
    expect(progressOf({ progress: "p" }, two)).toEqual({ type: "progress", text: "p" });
    expect(progressOf({ progress: "p" }, new Set(["call_a"]))).toMatchObject({ id: "call_a" });
  });

  it("the translator knows which calls are open from the stream's updates", () => {
    const t = new RunTranslator();
    const calls = [
      { name: "a", id: "call_a", args: {} },
      { name: "b", id: "call_b", args: {} },
    ];
    t.handle("updates", { model_request: { messages: [new AIMessage({ content: "", tool_calls: calls })] } });
    expect(t.handle("custom", { progress: "both running" })).toEqual([{ type: "progress", text: "both running" }]);
    t.handle("updates", { tools: { messages: [new ToolMessage({ content: "done", tool_call_id: "call_a", name: "a" })] } });
    expect(t.handle("custom", { progress: "b alone" })).toEqual([{ type: "progress", text: "b alone", id: "call_b" }]);
  });
});

describe("reasoning", () => {
  it("reads the shapes the model classes give it, each once", () => {
    expect(reasoningOf(new AIMessageChunk({ content: "", additional_kwargs: { reasoning_content: "hmm" } }))).toBe("hmm");
    expect(reasoningOf(new AIMessageChunk({ content: [{ type: "thinking", thinking: "let me see" }] as never }))).toBe(
      "let me see",
    );
    // The OpenAI Responses API gives a summary delta both as a block and in additional_kwargs.
    const responses = new AIMessageChunk({
      content: [{ type: "reasoning", reasoning: "step one" }] as never,
      additional_kwargs: { reasoning: { type: "reasoning", summary: [{ type: "summary_text", text: "step one" }] } },
    });
    expect(reasoningOf(responses)).toBe("step one");
    expect(reasoningOf(new AIMessageChunk({ content: "plain text" }))).toBe("");
  });

  it("only the reply nodes' reasoning counts: a model called inside middleware is not the agent thinking", () => {
    const t = new RunTranslator();
    const chunk = new AIMessageChunk({ content: "", additional_kwargs: { reasoning_content: "title thoughts" } });
    expect(t.handle("messages", [chunk, { langgraph_node: "Title.after_agent" }])).toEqual([]);
    expect(t.handle("messages", [chunk, { langgraph_node: "model_request" }])).toEqual([
      { type: "reasoning", delta: "title thoughts" },
    ]);
    expect(t.text).toBe("");
  });
});

describe("a reply cut off by a new message", () => {
  const user = new HumanMessage({ content: "talk", id: "h1" });

  it("is written whole when the thread does not hold it", () => {
    const [m, ...rest] = cutOffMessages("Half an answ", [user]);
    expect(rest).toEqual([]);
    expect(m?.text).toBe(`Half an answ\n\n${CUT_OFF_MARK}`);
    expect(m?.id).toMatch(/^cut-off-/);
  });

  it("marks the kept partial in place, by its id", () => {
    const kept = new AIMessage({ content: "Half an answ", id: "partial-1" });
    const [m] = cutOffMessages("Half an answ", [user, kept]);
    expect(m?.id).toBe("partial-1");
    expect(m?.text).toBe(`Half an answ\n\n${CUT_OFF_MARK}`);
  });

  it("after a turn with tool calls, adds a mark of its own and leaves the calls alone", () => {
    const turn = new AIMessage({ content: "Let me check.", id: "ai-1", tool_calls: [{ name: "t", id: "c1", args: {} }] });
    const result = new ToolMessage({ content: "stopped", tool_call_id: "c1", name: "t" });
    const [m] = cutOffMessages("Let me check.", [user, turn, result]);
    expect(m?.id).not.toBe("ai-1");
    expect(m?.text).toBe(CUT_OFF_MARK);
  });

  it("adds nothing for an empty partial; history and title read it without the mark", () => {
    expect(cutOffMessages("  ", [user])).toEqual([]);
    expect(withoutCutOffMark(`Half\n\n${CUT_OFF_MARK}`)).toBe("Half");
    expect(withoutCutOffMark(CUT_OFF_MARK)).toBe("");
    expect(withoutCutOffMark("untouched")).toBe("untouched");
  });
});

describe("the embedded agent", () => {
  let mock: MockModel;
  let t: TestHarness;

  beforeEach(async () => {
    mock = await startMockModel();
  });

  afterEach(async () => {
    await t?.harness.close();
    await mock.close();
  });

  it("two tools reporting side by side: each report names its own call", async () => {
    t = await startHarness(mock, {}, [progressTool({ reportId: true })]);
    const calls = ["call_a", "call_b"].map((id) => ({ name: PROGRESS_TOOL, id, args: { steps: 2, delay_ms: 20 } }));
    mock.enqueue({ toolCalls: calls }, { text: "Both done." });
    const events = await collect(t.harness.run("t", "run both"));
    const progress = events.filter((e) => e.type === "progress");
    for (const id of ["call_a", "call_b"]) {
      const mine = progress.filter((e) => e.id === id).map((e) => e.text);
      expect(mine).toEqual([progressText(1, 2), progressText(2, 2)]);
    }
    expect(progress).toHaveLength(4);
    expect(last(events)).toMatchObject({ type: "done", text: "Both done." });
  });

  it("the mock model answers a reply's reasoning unstreamed as message.reasoning_content", async () => {
    mock.enqueue({ reasoning: "short thought", text: "answer" });
    const res = await fetch(`${mock.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "mock-model", messages: [{ role: "user", content: "q" }] }),
    });
    const body = (await res.json()) as { choices: Array<{ message: Record<string, unknown> }> };
    expect(body.choices[0]?.message).toMatchObject({ content: "answer", reasoning_content: "short thought" });
  });

  it("reasoning before a tool call and before the answer: each turn's, none of it in the reply", async () => {
    t = await startHarness(mock, {}, [progressTool()]);
    mock.enqueue(
      { reasoning: "I should run the job.", toolCalls: [{ name: PROGRESS_TOOL, args: { steps: 1, delay_ms: 0 } }] },
      { reasoning: "It ran; say so.", text: "The job ran." },
    );
    const events = await collect(t.harness.run("t", "run the job"));
    const thoughts = events.flatMap((e) => (e.type === "reasoning" ? [e.delta] : [])).join("");
    expect(thoughts).toBe("I should run the job.It ran; say so.");
    const toolStart = events.findIndex((e) => e.type === "tool_start");
    expect(events.findIndex((e) => e.type === "reasoning")).toBeLessThan(toolStart);
    expect(deltas(events).join("")).toBe("The job ran.");
    expect(last(events)).toMatchObject({ type: "done", text: "The job ran." });
  });

  it("an interrupted first run: the next run names the thread from the first message, without the mark", async () => {
    t = await startHarness(mock, { agent: { features: { title: true } } });
    mock.enqueue({ text: "a long answer that keeps streaming for quite a while yet", chunkSize: 2, delayMs: 40 });
    let texts = 0;
    const first = await runUntil(
      t.harness.run("t", "plan the trip"),
      (e) => e.type === "text" && ++texts === 3,
      () => t.harness.cancel("t"),
    );
    expect(last(first)).toMatchObject({ type: "error", code: "cancelled" });
    expect((await t.harness.getThread("t"))?.title).toBeUndefined();
    mock.enqueue({ text: "" }, { text: "Trip Planning" });
    const second = await collect(t.harness.run("t", "by train", { interrupted: deltas(first).join("") }));
    expect(last(second)).toMatchObject({ type: "done", text: "" });
    const titleAsk = JSON.stringify(mock.requests.at(-1)?.messages);
    expect(titleAsk).toContain("User: plan the trip");
    expect(titleAsk).not.toContain(CUT_OFF_MARK);
    expect((await t.harness.getThread("t"))?.title).toBe("Trip Planning");
  });
});
