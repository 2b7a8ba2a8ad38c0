/**
 * Any interrupt value reaches the chat as a question: the clarification shape with its options,
 * anything else as text. Several open interrupts are answered one at a time, by id.
 */
import { AIMessage } from "@langchain/core/messages";
import { END, interrupt, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { AgentHarness } from "../../src/harness/index.js";
import { resumeValue, toClarification } from "../../src/harness/interrupts.js";
import type { RunEvent } from "../../src/harness/types.js";
import { collect, deltas, last } from "./helpers.js";

describe("toClarification", () => {
  it("reads the ask_clarification shape, with DeerFlow's clarification_type as the kind", () => {
    expect(toClarification("i1", { question: " Which? ", options: ["a", "b", "a", ""], kind: "choice" })).toEqual({
      interruptId: "i1",
      question: "Which?",
      options: ["a", "b"],
      kind: "choice",
    });
    expect(
      toClarification("i2", { question: "Format?", clarification_type: "approach_choice", context: "why", options: ["PDF"] }),
    ).toEqual({ interruptId: "i2", question: "Format?", options: ["PDF"], kind: "approach_choice", context: "why" });
  });

  it("asks any other value in words: its question, message or description, else its JSON", () => {
    expect(toClarification("a", "Proceed?")).toEqual({ interruptId: "a", question: "Proceed?", options: [] });
    expect(toClarification("b", { message: "Type the release name", level: 2 })).toEqual({
      interruptId: "b",
      question: "Type the release name",
      options: [],
    });
    expect(toClarification("c", { description: "Publish?", draft: "x" }).question).toBe("Publish?");
    expect(toClarification("d", { action: "deploy", target: "prod" }).question).toBe(
      JSON.stringify({ action: "deploy", target: "prod" }, null, 2),
    );
    expect(toClarification("e", 42).question).toBe("42");
    const huge = toClarification("f", { blob: "x".repeat(5000) }).question;
    expect(huge.length).toBeLessThan(1600);
    expect(huge.endsWith("…")).toBe(true);
  });

  it("resumes by id only when several interrupts are open", () => {
    expect(resumeValue([{ id: "x", value: 1 }], "yes")).toBe("yes");
    expect(
      resumeValue(
        [
          { id: "x", value: 1 },
          { id: "y", value: 2 },
        ],
        "yes",
      ),
    ).toEqual({ x: "yes" });
    const two = [
      { id: "x", value: 1 },
      { id: "y", value: 2 },
    ];
    expect(resumeValue(two, "yes", "y")).toEqual({ y: "yes" });
  });
});

describe("several interrupts at once", () => {
  it("each is asked and answered in turn, and each answer reaches its own node", async () => {
    const ask = (name: string) => () => ({
      messages: [new AIMessage(`${name}: ${String(interrupt({ question: `${name}?` }))}`)],
    });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("size", ask("size"))
      .addNode("colour", ask("colour"))
      .addEdge(START, "size")
      .addEdge(START, "colour")
      .addEdge("size", END)
      .addEdge("colour", END)
      .compile({ checkpointer: new MemorySaver() });
    const harness = new AgentHarness({ agent: graph, backend: "graph", modelName: "parallel" });
    const seen: string[] = [];
    const step = async (events: AsyncIterable<RunEvent>) => {
      const all = await collect(events);
      seen.push(deltas(all).join(""));
      return last(all);
    };
    const first = await step(harness.run("t1", "order"));
    if (first.type !== "clarification") throw new Error(`expected a question, got ${first.type}`);
    const second = await step(harness.resume("t1", "big", { interruptId: first.interruptId }));
    if (second.type !== "clarification") throw new Error(`expected the second question, got ${second.type}`);
    expect([first.question, second.question].sort()).toEqual(["colour?", "size?"]);
    const done = await step(harness.resume("t1", "red", { interruptId: second.interruptId }));
    expect(done.type).toBe("done");
    // Each node's answer shows in the run that finished it.
    expect(seen).toEqual(["", `${first.question.slice(0, -1)}: big`, `${second.question.slice(0, -1)}: red`]);
    expect(done).toMatchObject({ text: `${second.question.slice(0, -1)}: red` });
  });
});
