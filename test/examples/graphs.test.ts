/**
 * The graphs in examples/ run as examples/README.md says: my-graph.mjs drafts with the model and
 * asks before "posting"; wrapped-graph.mjs puts research.mjs (`{ topic }` -> `{ report }`) in a
 * chat. Each is built the way Antler builds a graph backend: the factory gets a checkpointer and
 * the config, then runs on a thread with `{ messages }`.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { HumanMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";
import { ROOT } from "../helpers/cli.js";

interface Run {
  messages: Array<{ text: string; getType(): string }>;
  __interrupt__?: Array<{ value: { question: string; options: string[] } }>;
}
interface ExampleGraph {
  invoke(input: unknown, config: unknown): Promise<Run>;
}
type Factory = (deps: { checkpointer: MemorySaver; config: unknown }) => ExampleGraph;

let mock: MockModel;
beforeAll(async () => {
  mock = await startMockModel();
});
afterAll(() => mock.close());

async function example(file: string): Promise<ExampleGraph> {
  const mod = (await import(pathToFileURL(path.join(ROOT, "examples", file)).href)) as { graph: Factory };
  return mod.graph({ checkpointer: new MemorySaver(), config: { models: [mockModelConfig(mock)] } });
}

describe("examples/", () => {
  it("my-graph.mjs drafts the announcement, asks Yes / No, and posts on Yes", async () => {
    const graph = await example("my-graph.mjs");
    const thread = { configurable: { thread_id: "announce" } };
    mock.enqueue({ text: "Friday's release moves to Monday." });
    const asked = await graph.invoke({ messages: [new HumanMessage("release moves to monday")] }, thread);
    expect(asked.messages.at(-1)?.text).toBe("Friday's release moves to Monday.");
    expect(asked.__interrupt__?.[0]?.value).toEqual({ question: "Post this announcement to #general?", options: ["Yes", "No"] });
    const done = await graph.invoke(new Command({ resume: "Yes" }), thread);
    expect(done.messages.at(-1)?.text).toBe("Posted to #general.");
  });

  it("wrapped-graph.mjs runs research.mjs on the user's message and replies with its report", async () => {
    const graph = await example("wrapped-graph.mjs");
    mock.enqueue({ text: "1. what\n2. why\n3. how" }, { text: "Tides follow the moon." });
    const out = await graph.invoke({ messages: [new HumanMessage("tides")] }, { configurable: { thread_id: "research" } });
    const last = out.messages.at(-1);
    expect(last?.getType()).toBe("ai");
    expect(last?.text).toBe("Tides follow the moon.");
    const asked = mock.requests.slice(-2).map((r) => JSON.stringify(r.messages));
    expect(asked[0]).toContain("tides");
    expect(asked[1]).toContain("1. what");
  });
});
