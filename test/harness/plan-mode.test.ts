/**
 * Plan mode (`features.plan_mode`: langchain's to-do middleware as Antler's `PlanMode`) and the
 * chain places of the two switches of issue 33: the model gets `write_todos` and its prompt, a
 * plan call streams as a `tool_start` with the todos the progress view reads, parallel calls are
 * refused without a graph step of their own, and the switches sit in DeerFlow's order.
 */
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentHarness, buildMiddlewareChain, createAntlerAgent } from "../../src/harness/index.js";
import { mockChatModel } from "../fakes/langgraph/graphs.js";
import { contentText, type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, last, startHarness } from "./helpers.js";

let mock: MockModel;
beforeEach(async () => {
  mock = await startMockModel();
});
afterEach(async () => {
  await mock.close();
});

const modelOf = (m: MockModel) => mockChatModel(m.url);

const TODOS = [
  { content: "Read the changelog", status: "in_progress" },
  { content: "Compare the versions", status: "pending" },
];

describe("plan mode", () => {
  it("gives the model write_todos and its prompt; a plan call streams with its todos and the model reads the update", async () => {
    const t = await startHarness(mock, { agent: { features: { plan_mode: true } } });
    mock.enqueue({ toolCalls: [{ name: "write_todos", args: { todos: TODOS } }] }, { text: "Planned." });
    const events = await collect(t.harness.run("t-plan", "plan it"));
    await t.harness.close();

    expect(last(events)).toMatchObject({ type: "done", text: "Planned." });
    expect(events).toContainEqual(expect.objectContaining({ type: "tool_start", name: "write_todos", args: { todos: TODOS } }));
    expect(events).toContainEqual(expect.objectContaining({ type: "tool_end", name: "write_todos", error: false }));
    const first = mock.requests[0]!;
    expect(first.tools?.map((x) => x.function.name)).toContain("write_todos");
    expect(contentText(first.messages[0]?.content)).toContain("## `write_todos`");
    const result = mock.requests[1]!.messages.find((m) => m.role === "tool");
    expect(contentText(result?.content)).toBe(`Updated todo list to ${JSON.stringify(TODOS)}`);
  });

  it("is off by default: no write_todos tool, no plan prompt", async () => {
    const t = await startHarness(mock);
    await collect(t.harness.run("t-off", "hi"));
    await t.harness.close();
    expect(mock.requests[0]!.tools?.map((x) => x.function.name)).not.toContain("write_todos");
    expect(contentText(mock.requests[0]!.messages[0]?.content)).not.toContain("write_todos");
  });

  it("refuses two write_todos calls in one turn, as langchain's middleware does, without a graph step of its own", async () => {
    const agent = createAntlerAgent({ model: modelOf(mock), features: { planMode: true }, checkpointer: new MemorySaver() });
    expect(Object.keys(agent.graph.nodes).filter((n) => n.startsWith("PlanMode"))).toEqual([]);
    mock.enqueue(
      {
        toolCalls: [
          { name: "write_todos", args: { todos: TODOS } },
          { name: "write_todos", args: { todos: [] } },
        ],
      },
      { text: "Once, then." },
    );
    const events = await collect(new AgentHarness({ agent, modelName: "mock" }).run("t", "plan twice"));
    expect(last(events)).toMatchObject({ type: "done", text: "Once, then." });
    const ends = events.filter((e) => e.type === "tool_end");
    expect(ends).toHaveLength(2);
    for (const end of ends)
      expect(end).toMatchObject({ error: true, output: expect.stringContaining("never be called multiple times") });
  });

  it("plan mode sits after summarization, subagents right before loop detection (DeerFlow's order)", () => {
    const model = modelOf(mock);
    const setup = { agents: [{ name: "r", description: "d", systemPrompt: "p" }] };
    const chain = buildMiddlewareChain(
      { danglingToolCalls: true, summarization: true, planMode: true, title: true, subagents: true },
      [],
      model,
      undefined,
      { subagents: setup },
    );
    expect(chain.map((m) => m.name)).toEqual([
      "DanglingToolCalls",
      "SummarizationMiddleware",
      "PlanMode",
      "Title",
      "Subagents",
      "LoopDetection",
      "Clarification",
    ]);
    expect(() => buildMiddlewareChain({ subagents: true }, [], model)).toThrow(/needs subagents/);
  });

  it("a tool of the agent's own named like one a feature brings is refused, not shadowed", () => {
    const own = tool(async () => "mine", { name: "write_todos", description: "d", schema: z.object({}) });
    expect(() => createAntlerAgent({ model: modelOf(mock), tools: [own], features: { planMode: true } })).toThrow(
      /a tool named write_todos, which a feature brings itself/,
    );
    expect(() => createAntlerAgent({ model: modelOf(mock), tools: [own] })).not.toThrow();
  });
});
