/**
 * Model usage: what the harness reports to its `onUsage` sink equals what the mock model reported,
 * per kind (chat reply, title, summarization), however the run ends, each model call once.
 */
import { AIMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { tool } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentHarness, createHarness } from "../../src/harness/index.js";
import type { RunEvent } from "../../src/harness/types.js";
import type { ModelUsage } from "../../src/harness/usage.js";
import { type ChatCompletionRequest, type MockModel, type MockUsage, startMockModel } from "../fakes/openai.js";
import { collect, configFor, last, memoryLogger, runUntil, tempDir } from "./helpers.js";

let mock: MockModel;
let harness: AgentHarness | undefined;
let reported: ModelUsage[];

beforeEach(async () => {
  mock = await startMockModel();
  reported = [];
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await mock.close();
});

const ping = tool(async () => "pong", { name: "ping", description: "answers pong", schema: z.object({}) });
const slow = tool(
  async (_args, config) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => resolve("late"), 5_000);
      config?.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(config.signal?.reason);
      });
    }),
  { name: "slow", description: "takes its time", schema: z.object({}) },
);

/** A harness from config on the mock, whose usage goes to `reported`. */
async function start(extra: Record<string, unknown> = {}): Promise<AgentHarness> {
  const { logger } = memoryLogger();
  harness = await createHarness({
    config: configFor(mock, extra),
    baseDir: tempDir(),
    logger,
    tools: [ping, slow],
    onUsage: (usage) => reported.push(usage),
  });
  return harness;
}

const usage = (prompt: number, completion: number): MockUsage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

/** The report the harness should make for a call the mock answered with `u`. */
const expected = (kind: ModelUsage["kind"], u: MockUsage): ModelUsage => ({
  kind,
  model: "mock",
  inputTokens: u.prompt_tokens,
  outputTokens: u.completion_tokens,
  totalTokens: u.total_tokens,
});

describe("chat usage", () => {
  it("a reply: one report with the mock's counts, the same as done.usage", async () => {
    const h = await start();
    const u = usage(11, 7);
    mock.enqueue({ text: "Hello there.", usage: u });
    const events = await collect(h.run("t", "hi"));
    expect(reported).toEqual([expected("chat", u)]);
    expect(last(events)).toMatchObject({ type: "done", usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18 } });
  });

  it("a reply after a tool call: both model calls, each once, the first before the run ends", async () => {
    const h = await start();
    const first = usage(20, 5);
    const second = usage(31, 9);
    mock.enqueue({ toolCalls: [{ name: "ping", args: {} }], usage: first }, { text: "It said pong.", usage: second });
    let atToolStart: ModelUsage[] = [];
    const events = await runUntil(
      h.run("t", "ping it"),
      (e) => e.type === "tool_start",
      () => {
        atToolStart = [...reported];
      },
    );
    expect(atToolStart).toEqual([expected("chat", first)]);
    expect(reported).toEqual([expected("chat", first), expected("chat", second)]);
    expect(last(events)).toMatchObject({ type: "done", usage: { inputTokens: 51, outputTokens: 14, totalTokens: 65 } });
  });

  it("a run that ends in a question reports its turn; the resumed run reports only its own", async () => {
    const h = await start();
    const asking = usage(40, 12);
    const answering = usage(60, 8);
    const args = { question: "Which colour?", options: ["red", "blue"] };
    mock.enqueue({ toolCalls: [{ name: "ask_clarification", args }], usage: asking });
    expect(last(await collect(h.run("t", "paint it")))).toMatchObject({ type: "clarification", question: "Which colour?" });
    expect(reported).toEqual([expected("chat", asking)]);
    mock.enqueue({ text: "Blue it is.", usage: answering });
    expect(last(await collect(h.resume("t", "blue")))).toMatchObject({ type: "done", text: "Blue it is." });
    expect(reported).toEqual([expected("chat", asking), expected("chat", answering)]);
  });

  it("a run that fails or is cancelled still reports the turns it made", async () => {
    const h = await start();
    const failing = usage(13, 3);
    mock.enqueue({ toolCalls: [{ name: "ping", args: {} }], usage: failing }, { fault: "http500" });
    expect(last(await collect(h.run("a", "ping it")))).toMatchObject({ type: "error" });
    expect(reported).toEqual([expected("chat", failing)]);

    const cancelled = usage(17, 4);
    mock.enqueue({ toolCalls: [{ name: "slow", args: {} }], usage: cancelled });
    const events: RunEvent[] = await runUntil(
      h.run("b", "be slow"),
      (e) => e.type === "tool_start",
      () => h.cancel("b"),
    );
    expect(last(events)).toMatchObject({ type: "error", code: "cancelled" });
    expect(reported).toEqual([expected("chat", failing), expected("chat", cancelled)]);
  });
});

/**
 * A user's graph whose second node rewrites the model's answer in place (same id), so the answer,
 * usage and all, shows up in two updates.
 */
function rewritingGraph(m: MockModel) {
  const model = new ChatOpenAI({ model: "mock-model", apiKey: "sk-test", configuration: { baseURL: m.url }, maxRetries: 0 });
  return new StateGraph(MessagesAnnotation)
    .addNode("answer", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("polish", (state) => {
      const answer = state.messages.at(-1) as AIMessage;
      return { messages: [new AIMessage({ ...answer, content: `${answer.text}!` })] };
    })
    .addEdge(START, "answer")
    .addEdge("answer", "polish")
    .addEdge("polish", END)
    .compile({ checkpointer: new MemorySaver() });
}

describe("a user's graph", () => {
  it("an answer that several nodes write counts once, under the harness's model name", async () => {
    harness = new AgentHarness({
      agent: rewritingGraph(mock),
      backend: "graph",
      modelName: "./graph.ts:agent",
      onUsage: (u) => reported.push(u),
    });
    const u = usage(9, 4);
    mock.enqueue({ text: "Done", usage: u });
    const events = await collect(harness.run("t", "go"));
    expect(last(events)).toMatchObject({ type: "done", text: "Done!" });
    expect(reported).toEqual([{ ...expected("chat", u), model: "./graph.ts:agent" }]);
  });
});

describe("middleware usage", () => {
  it("the title call is reported as title, the reply as chat", async () => {
    const h = await start({ agent: { features: { title: true } } });
    const reply = usage(25, 6);
    const title = usage(70, 3);
    mock.enqueue({ text: "Sure, blue paint.", usage: reply }, { text: "Paint Color Choice", usage: title });
    await collect(h.run("t", "what paint?"));
    expect((await h.getThread("t"))?.title).toBe("Paint Color Choice");
    expect(reported).toEqual([expected("chat", reply), expected("title", title)]);
  });

  it("the summary call is reported as summarization, every reply as chat", async () => {
    const h = await start({ agent: { features: { summarization: true } } });
    const summary = usage(900, 40);
    const reply = usage(50, 2);
    const isSummary = (req: ChatCompletionRequest) => JSON.stringify(req.messages).includes("Context Extraction Assistant");
    mock.setDefault((req) => (isSummary(req) ? { text: "SUMMARY", usage: summary } : { text: "ok", usage: reply }));
    // Each message is about 1000 tokens: past the default trigger (8000) after nine, and the
    // history holds more than the 20 messages kept verbatim by the eleventh turn.
    const long = "word ".repeat(800);
    for (let i = 0; i < 12; i++) await collect(h.run("t", `${i} ${long}`));
    const summaries = mock.requests.filter(isSummary).length;
    expect(summaries).toBeGreaterThan(0);
    expect(reported.filter((u) => u.kind === "summarization")).toEqual(Array(summaries).fill(expected("summarization", summary)));
    expect(reported.filter((u) => u.kind === "chat")).toEqual(Array(12).fill(expected("chat", reply)));
    expect(reported).toHaveLength(12 + summaries);
  });
});
