import { tool } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, deltas, last, startHarness, type TestHarness } from "./helpers.js";

let mock: MockModel;
let t: TestHarness;

afterEach(async () => {
  await t?.harness.close();
  await mock?.close();
});

const lookup = tool(async ({ city }) => `It is sunny in ${city}.`, {
  name: "lookup_weather",
  description: "weather",
  schema: z.object({ city: z.string() }),
});

describe("a run", () => {
  beforeEach(async () => {
    mock = await startMockModel();
    t = await startHarness(mock, {}, [lookup]);
  });

  it("streams the model's text deltas in order and done.text is exactly the output", async () => {
    const text = "Antler streams every token, in order: 1, 2, 3 — and ends.";
    mock.enqueue({ text, chunkSize: 3 });
    const events = await collect(t.harness.run("t1", "hi"));
    expect(deltas(events)).toHaveLength(Math.ceil(text.length / 3));
    expect(deltas(events).join("")).toBe(text);
    const done = last(events);
    expect(done).toMatchObject({ type: "done", text });
    expect(done.type === "done" && done.usage?.outputTokens).toBeGreaterThan(0);
  });

  it("runs tools between model turns and reports them", async () => {
    mock.enqueue(
      { text: "Checking.", toolCalls: [{ name: "lookup_weather", args: { city: "Oslo" }, id: "call_w1" }] },
      { text: "Sunny in Oslo." },
    );
    const events = await collect(t.harness.run("t1", "weather in Oslo?"));
    expect(events.filter((e) => e.type === "tool_start")).toEqual([
      { type: "tool_start", id: "call_w1", name: "lookup_weather", args: { city: "Oslo" } },
    ]);
    expect(events.filter((e) => e.type === "tool_end")).toEqual([
      { type: "tool_end", id: "call_w1", name: "lookup_weather", output: "It is sunny in Oslo.", error: false },
    ]);
    expect(last(events)).toMatchObject({ type: "done", text: "Checking.\n\nSunny in Oslo." });
    const toolMsg = mock.requests[1]?.messages.find((m) => m.role === "tool");
    expect(toolMsg).toMatchObject({ tool_call_id: "call_w1", content: "It is sunny in Oslo." });
  });

  it("keeps the conversation: the second run's request carries the first exchange", async () => {
    await collect(t.harness.run("t1", "first"));
    await collect(t.harness.run("t1", "second"));
    const roles = mock.requests[1]?.messages.map((m) => `${m.role}:${typeof m.content === "string" ? m.content : ""}`);
    expect(roles?.slice(1)).toEqual(["user:first", "assistant:ok: first", "user:second"]);
    expect(await t.harness.getThread("t1")).toMatchObject({ threadId: "t1", messageCount: 4, model: "mock", running: false });
    expect(await t.harness.getThread("never-run")).toBeUndefined();
  });
});

describe("ask_clarification", () => {
  beforeEach(async () => {
    mock = await startMockModel();
    t = await startHarness(mock);
  });

  const ask = (id = "call_ask1") =>
    ({
      text: "One thing first.",
      toolCalls: [
        { name: "ask_clarification", id, args: { question: "Which color?", options: ["red", "blue", "red"], kind: "choice" } },
      ],
    }) as const;

  it("pauses with the question and options, and resume feeds the answer back as the tool result", async () => {
    mock.enqueue(ask(), { text: "Blue it is." });
    const first = await collect(t.harness.run("t1", "paint it"));
    expect(deltas(first).join("")).toBe("One thing first.");
    const question = last(first);
    expect(question).toMatchObject({ type: "clarification", question: "Which color?", options: ["red", "blue"], kind: "choice" });
    expect(first.some((e) => e.type === "tool_start")).toBe(false);
    const info = await t.harness.getThread("t1");
    expect(info?.pending?.question).toBe("Which color?");
    expect(info?.pending?.interruptId).toBe(question.type === "clarification" ? question.interruptId : "");

    const second = await collect(t.harness.resume("t1", "blue"));
    expect(last(second)).toMatchObject({ type: "done", text: "Blue it is." });
    const messages = mock.requests[1]?.messages ?? [];
    expect(messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_ask1", content: "blue" });
    expect((await t.harness.getThread("t1"))?.pending).toBeUndefined();
  });

  it("asks one question at a time: of two asks in one response only the first is kept", async () => {
    mock.enqueue(
      {
        toolCalls: [
          { name: "ask_clarification", id: "call_a", args: { question: "Which color?" } },
          { name: "ask_clarification", id: "call_b", args: { question: "Which size?" } },
        ],
      },
      { text: "Blue it is." },
    );
    const first = await collect(t.harness.run("t1", "paint it"));
    expect(last(first)).toMatchObject({ type: "clarification", question: "Which color?" });
    expect(last(await collect(t.harness.resume("t1", "blue")))).toMatchObject({ type: "done", text: "Blue it is." });
    // The model sees one call and its one answer, not an unanswered second question.
    const sent = mock.requests[1]?.messages ?? [];
    const calls = sent.flatMap((m) => (m as { tool_calls?: Array<{ id: string }> }).tool_calls ?? []).map((c) => c.id);
    expect(calls).toEqual(["call_a"]);
    expect(sent.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["call_a"]);
  });

  it("a tool called next to the question runs once, and the resumed run does not report it again", async () => {
    await t.harness.close();
    let runs = 0;
    const side = tool(
      async () => {
        runs++;
        return "noted";
      },
      { name: "take_note", description: "note", schema: z.object({}) },
    );
    t = await startHarness(mock, {}, [side]);
    mock.enqueue(
      {
        toolCalls: [
          { name: "take_note", args: {}, id: "call_note" },
          { name: "ask_clarification", args: { question: "Which color?" }, id: "call_ask3" },
        ],
      },
      { text: "Noted, red." },
    );
    const first = await collect(t.harness.run("t1", "paint it"));
    expect(first.map((e) => e.type)).toEqual(["tool_start", "tool_end", "clarification"]);
    const second = await collect(t.harness.resume("t1", "red"));
    expect(second.filter((e) => e.type !== "text").map((e) => e.type)).toEqual(["done"]);
    expect(last(second)).toMatchObject({ type: "done", text: "Noted, red." });
    expect(runs).toBe(1);
    const results = mock.requests[1]?.messages.filter((m) => m.role === "tool").map((m) => `${m.tool_call_id}:${m.content}`);
    expect(results).toEqual(["call_note:noted", "call_ask3:red"]);
  });

  it("answers no_pending when nothing waits", async () => {
    await collect(t.harness.run("t1", "hello"));
    const events = await collect(t.harness.resume("t1", "blue"));
    expect(events).toEqual([{ type: "error", code: "no_pending", message: expect.any(String) }]);
  });

  it("a new message instead of an answer drops the question and the thread goes on", async () => {
    mock.enqueue(ask("call_ask2"));
    await collect(t.harness.run("t1", "paint it"));
    const events = await collect(t.harness.run("t1", "never mind, what time is it?"));
    expect(last(events)).toMatchObject({ type: "done", text: "ok: never mind, what time is it?" });
    const roles = mock.requests[1]?.messages.map((m) => m.role);
    expect(roles?.slice(-3)).toEqual(["assistant", "tool", "user"]);
    expect((await t.harness.getThread("t1"))?.pending).toBeUndefined();
  });
});

describe("tool failures and loops", () => {
  const explode = tool(
    async () => {
      throw new Error("disk on fire");
    },
    { name: "explode", description: "fails", schema: z.object({}) },
  );
  let pings = 0;
  const ping = tool(
    async () => {
      pings++;
      return "pong";
    },
    { name: "ping", description: "ping", schema: z.object({ x: z.number() }) },
  );

  it("a throwing tool becomes an error result and the run goes on", async () => {
    mock = await startMockModel();
    t = await startHarness(mock, {}, [explode]);
    mock.enqueue({ toolCalls: [{ name: "explode", args: {}, id: "call_x" }] }, { text: "That failed, sorry." });
    const events = await collect(t.harness.run("t1", "do it"));
    const end = events.find((e) => e.type === "tool_end");
    expect(end).toMatchObject({ type: "tool_end", id: "call_x", error: true });
    expect(end?.type === "tool_end" && end.output).toContain("disk on fire");
    expect(last(events)).toMatchObject({ type: "done", text: "That failed, sorry." });
    expect(mock.requests[1]?.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_x" });
  });

  it("without tool_errors a throwing tool ends the run, and the thread stays usable", async () => {
    mock = await startMockModel();
    t = await startHarness(mock, { agent: { features: { tool_errors: false } } }, [explode]);
    mock.enqueue({ toolCalls: [{ name: "explode", args: {}, id: "call_y" }] });
    const events = await collect(t.harness.run("t1", "do it"));
    expect(last(events)).toMatchObject({ type: "error", code: "internal" });
    // The mock rejects a history with an unanswered tool call, as OpenAI does.
    const next = await collect(t.harness.run("t1", "again"));
    expect(last(next)).toMatchObject({ type: "done", text: "ok: again" });
  });

  it("loop detection warns at 3 identical calls and stops tool calls at 5", async () => {
    mock = await startMockModel();
    t = await startHarness(mock, {}, [ping]);
    pings = 0;
    mock.setDefault({ toolCalls: [{ name: "ping", args: { x: 1 } }] });
    const events = await collect(t.harness.run("t1", "ping forever"));
    const done = last(events);
    expect(done.type).toBe("done");
    expect(done.type === "done" && done.text).toMatch(/stopped because I kept calling ping/);
    expect(mock.requests).toHaveLength(5);
    const warned = mock.requests.map((r) => r.messages.some((m) => String(m.content).includes("[loop detection]")));
    expect(warned).toEqual([false, false, false, true, true]);
    expect(pings).toBe(4);
    // The fifth call is stripped before anyone sees it: no tool_start without a tool_end.
    expect(events.filter((e) => e.type === "tool_start")).toHaveLength(4);
    expect(events.filter((e) => e.type === "tool_end")).toHaveLength(4);
    // The stripped call leaves no dangling tool call behind: the next run is accepted.
    mock.setDefault({ text: "fine" });
    expect(last(await collect(t.harness.run("t1", "stop")))).toMatchObject({ type: "done", text: "fine" });
  });
});

describe("a backend that repeats completion ids", () => {
  it("does not lose history", async () => {
    mock = await startMockModel({ repeatIds: true });
    t = await startHarness(mock);
    await collect(t.harness.run("t1", "one"));
    await collect(t.harness.run("t1", "two"));
    await collect(t.harness.run("t1", "three"));
    const sent = mock.requests[2]?.messages.filter((m) => m.role === "assistant").map((m) => m.content);
    expect(sent).toEqual(["ok: one", "ok: two"]);
    expect((await t.harness.getThread("t1"))?.messageCount).toBe(6);
  });

  it("loses it without the message-id guard (the guard is what saves it)", async () => {
    mock = await startMockModel({ repeatIds: true });
    t = await startHarness(mock, { agent: { features: { message_id_guard: false } } });
    await collect(t.harness.run("t1", "one"));
    await collect(t.harness.run("t1", "two"));
    expect((await t.harness.getThread("t1"))?.messageCount).toBe(3);
  });
});
