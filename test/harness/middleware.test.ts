import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { type AgentMiddleware, createMiddleware } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentHarness, buildMiddlewareChain, createAntlerAgent } from "../../src/harness/index.js";
import { patchDanglingToolCalls } from "../../src/harness/middleware/dangling-tool-calls.js";
import { loopDetectionMiddleware } from "../../src/harness/middleware/loop-detection.js";
import { antlerSummarizationMiddleware } from "../../src/harness/middleware/summarization.js";
import { mockChatModel } from "../fakes/langgraph/graphs.js";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, deltas, last, startHarness } from "./helpers.js";

const named = (name: string, onModel?: (name: string) => void): AgentMiddleware =>
  createMiddleware({
    name,
    wrapModelCall: (request, handler) => {
      onModel?.(name);
      return handler(request);
    },
  });
const names = (chain: AgentMiddleware[]) => chain.map((m) => m.name);

let mock: MockModel;
beforeEach(async () => {
  mock = await startMockModel();
});
afterEach(async () => {
  await mock.close();
});

const modelOf = (m: MockModel) => mockChatModel(m.url);

describe("the middleware chain", () => {
  it("defaults to DeerFlow's: loop detection on, the rest off, clarification last", () => {
    expect(names(buildMiddlewareChain())).toEqual(["LoopDetection", "Clarification"]);
  });

  it("keeps DeerFlow order with every feature on, and a middleware instance replaces its feature", () => {
    const chain = buildMiddlewareChain(
      {
        danglingToolCalls: true,
        toolErrors: named("MyToolErrors"),
        messageIdGuard: true,
        dynamicContext: true,
        summarization: true,
        title: true,
        loopDetection: true,
      },
      [],
      modelOf(mock),
    );
    expect(names(chain)).toEqual([
      "DanglingToolCalls",
      "MyToolErrors",
      "MessageIdGuard",
      "DynamicContext",
      "SummarizationMiddleware",
      "Title",
      "LoopDetection",
      "Clarification",
    ]);
  });

  it("places extras after/before named middlewares, also relative to other extras; bare ones go before clarification", () => {
    const chain = buildMiddlewareChain({ toolErrors: true }, [
      { middleware: named("B"), before: "A" },
      { middleware: named("A"), after: "ToolErrors" },
      named("C"),
      { middleware: named("D"), before: "Clarification" },
    ]);
    expect(names(chain)).toEqual(["ToolErrors", "B", "A", "LoopDetection", "C", "D", "Clarification"]);
  });

  it("rejects conflicting anchors, cycles, unknown anchors and anything after clarification", () => {
    expect(() =>
      buildMiddlewareChain({ danglingToolCalls: true }, [
        { middleware: named("X"), after: "LoopDetection", before: "DanglingToolCalls" },
      ]),
    ).toThrow(/conflicting anchors/);
    expect(() =>
      buildMiddlewareChain({}, [
        { middleware: named("X"), after: "Y" },
        { middleware: named("Y"), after: "X" },
      ]),
    ).toThrow(/cycle: X \(after Y\), Y \(after X\)/);
    expect(() => buildMiddlewareChain({}, [{ middleware: named("X"), after: "Nope" }])).toThrow(/unknown anchor "Nope"/);
    expect(() => buildMiddlewareChain({}, [{ middleware: named("X"), after: "Clarification" }])).toThrow(/always last/);
    expect(() => buildMiddlewareChain({}, [named("LoopDetection")])).toThrow(/two middlewares are named LoopDetection/);
  });

  it("`middleware` is a full takeover and cannot be combined with features or extras", () => {
    const model = modelOf(mock);
    expect(() => createAntlerAgent({ model, middleware: [], features: {} })).toThrow(/cannot be combined/);
    expect(() => createAntlerAgent({ model, middleware: [], extraMiddleware: [] })).toThrow(/cannot be combined/);
  });

  it("runs extras in the placed order inside a real agent (SDK use: createAntlerAgent + AgentHarness)", async () => {
    const calls: string[] = [];
    const agent = createAntlerAgent({
      model: modelOf(mock),
      systemPrompt: "Be brief.",
      features: { loopDetection: false },
      extraMiddleware: [
        named("Second", (n) => calls.push(n)),
        { middleware: named("First", (n) => calls.push(n)), before: "Second" },
      ],
      checkpointer: new MemorySaver(),
    });
    const harness = new AgentHarness({ agent, modelName: "mock" });
    const events = await collect(harness.run("t", "hi"));
    expect(last(events)).toMatchObject({ type: "done", text: "ok: hi" });
    expect(calls).toEqual(["First", "Second"]);
    expect(mock.requests[0]?.tools?.map((t) => t.function.name)).toEqual(["ask_clarification"]);
    expect(mock.requests[0]?.messages[0]).toMatchObject({ role: "system" });
  });

  it("a takeover chain gets no built-in tool", async () => {
    const agent = createAntlerAgent({ model: modelOf(mock), middleware: [named("Only")], checkpointer: new MemorySaver() });
    await collect(new AgentHarness({ agent, modelName: "mock" }).run("t", "hi"));
    expect(mock.requests[0]?.tools ?? []).toEqual([]);
  });
});

describe("dangling tool calls", () => {
  it("patches unanswered calls right after their message, keeping answered ones", () => {
    const ai = new AIMessage({
      content: "",
      tool_calls: [
        { id: "a", name: "t", args: {} },
        { id: "b", name: "t", args: {} },
      ],
    });
    const patched = patchDanglingToolCalls([
      new HumanMessage("hi"),
      ai,
      new ToolMessage({ content: "A", tool_call_id: "a" }),
      new HumanMessage("next"),
    ]);
    expect(patched.map((m) => `${m.type}:${(m as ToolMessage).tool_call_id ?? ""}`)).toEqual([
      "human:",
      "ai:",
      "tool:a",
      "tool:b",
      "human:",
    ]);
  });
});

describe("dynamic context and title", () => {
  it("adds date and user to the newest user message only; the system prompt stays the same", async () => {
    const t = await startHarness(mock, { agent: { system_prompt: "Static prompt.", features: { dynamic_context: true } } });
    await collect(t.harness.run("t", "first", { user: { id: "u1", name: "Ada" }, context: { channel: "slack" } }));
    await collect(t.harness.run("t", "second", { user: { id: "u1", name: "Ada" } }));
    const [one, two] = mock.requests;
    const text = (c: unknown) => (typeof c === "string" ? c : JSON.stringify(c));
    expect(text(one?.messages[0]?.content)).toContain("Static prompt.");
    expect(text(two?.messages[0]?.content)).toBe(text(one?.messages[0]?.content));
    const newest = text(one?.messages.at(-1)?.content);
    expect(newest).toMatch(/Current date: \d{4}-\d{2}-\d{2}/);
    expect(newest).toContain("User: Ada (id u1)");
    expect(newest).toContain("channel: slack");
    expect(newest).toContain("first");
    const firstAgain = two?.messages.find((m) => m.role === "user");
    expect(text(firstAgain?.content)).toBe("first");
    await t.harness.close();
  });

  it("the first turn names the thread; the title call's tokens are not reply text", async () => {
    const t = await startHarness(mock, { agent: { features: { title: true } } });
    mock.enqueue({ text: "Sure, blue paint." }, { text: "Paint Color Choice" });
    const events = await collect(t.harness.run("t", "what paint?"));
    expect(deltas(events).join("")).toBe("Sure, blue paint.");
    expect(last(events)).toMatchObject({ type: "done", text: "Sure, blue paint." });
    expect((await t.harness.getThread("t"))?.title).toBe("Paint Color Choice");
    await collect(t.harness.run("t", "more"));
    expect(mock.requests).toHaveLength(3);
    expect((await t.harness.getThread("t"))?.title).toBe("Paint Color Choice");
    await t.harness.close();
  });
});

describe("summarization", () => {
  it("replaces old history with a summary once past the trigger; summary tokens are not reply text", async () => {
    const model = modelOf(mock);
    const agent = createAntlerAgent({
      model,
      features: { summarization: antlerSummarizationMiddleware({ model, triggerTokens: 40, keepMessages: 2 }) },
      checkpointer: new MemorySaver(),
    });
    const harness = new AgentHarness({ agent, modelName: "mock" });
    const long = "word ".repeat(30);
    await collect(harness.run("t", `first ${long}`));
    mock.enqueue({ text: "SUMMARY-OF-EARLIER-TALK" }, { text: "second answer" });
    const events = await collect(harness.run("t", "second"));
    expect(last(events)).toMatchObject({ type: "done", text: "second answer" });
    const final = mock.requests.at(-1)?.messages ?? [];
    expect(final.map((m) => JSON.stringify(m.content)).join("\n")).toContain("SUMMARY-OF-EARLIER-TALK");
    // The first user message is gone from what the model sees; only the summary stands for it.
    expect(final.some((m) => m.role === "user" && JSON.stringify(m.content).startsWith('"first'))).toBe(false);
    expect(mock.requests.at(-3)?.messages.some((m) => m.role === "user" && JSON.stringify(m.content).startsWith('"first'))).toBe(
      true,
    );
  });
});

describe("loop detection", () => {
  it("its stop replaces the response by id, also when the model gave the response none", async () => {
    const middleware = loopDetectionMiddleware({ warnAt: 2, stopAt: 2 });
    const call = (id: string) => ({ name: "ping", args: { x: 1 }, id, type: "tool_call" as const });
    const request = {
      messages: [
        new HumanMessage("go"),
        new AIMessage({ content: "", tool_calls: [call("c1")] }),
        new ToolMessage({ content: "pong", tool_call_id: "c1" }),
      ],
    };
    const response = new AIMessage({ content: "again", tool_calls: [call("c2")] });
    expect(response.id).toBeUndefined();
    const wrap = middleware.wrapModelCall as unknown as (r: unknown, h: () => Promise<AIMessage>) => Promise<unknown>;
    const out = await wrap(request, async () => response);
    expect(out).toBeInstanceOf(Command);
    const [stripped, notice] = (out as Command).update ? ((out as Command).update as { messages: AIMessage[] }).messages : [];
    expect(response.id).toMatch(/^loop-/);
    expect(stripped?.id).toBe(response.id);
    expect(stripped?.tool_calls).toEqual([]);
    expect(stripped?.text).toBe("again");
    expect(notice?.text).toMatch(/stopped because I kept calling ping/);
  });
});
