/**
 * Memory per person, the parts without a running agent: which messages make a turn, how the
 * extraction's answer is read, where the middleware sits in the chain, and the config check.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { buildMiddlewareChain } from "../../src/harness/index.js";
import { MemoryBook, parseChanges, turnOf } from "../../src/harness/memory/index.js";
import type { MockModel } from "../fakes/openai.js";
import { configFor } from "./helpers.js";

describe("the turn the extraction reads", () => {
  it("a turn in a group is only the writer's message; in a direct chat the steered ones count too", () => {
    const messages = [
      new HumanMessage({ content: "<context>\nCurrent date: x\n</context>\n\nI'm Ada", id: "1" }),
      new AIMessage({ content: "", tool_calls: [{ id: "c", name: "ping", args: {} }], id: "2" }),
      new ToolMessage({ content: "pong", tool_call_id: "c", name: "ping", id: "3" }),
      new HumanMessage({ content: "and I'm Bob, I live in Oslo", id: "4", additional_kwargs: { antler_steered: true } }),
    ];
    const reply = new AIMessage({ content: "Hi both.", id: "5" });
    expect(turnOf(messages, reply, true)).toEqual({ user: ["I'm Ada"], reply: "Hi both." });
    expect(turnOf(messages, reply, false)).toEqual({ user: ["I'm Ada", "and I'm Bob, I live in Oslo"], reply: "Hi both." });
    const answered = [
      new HumanMessage({ content: "book a table", id: "1" }),
      new AIMessage({ content: "", tool_calls: [{ id: "q", name: "ask_clarification", args: {} }], id: "2" }),
      new ToolMessage({ content: "for two, I'm vegetarian", tool_call_id: "q", name: "ask_clarification", id: "3" }),
    ];
    expect(turnOf(answered, reply, true)?.user).toEqual(["book a table", "(answering a question) for two, I'm vegetarian"]);
  });
});

describe("parseChanges", () => {
  const known = new Set(["a1", "b2"]);
  it("reads the first JSON object, fenced or in prose, entry by entry", () => {
    expect(parseChanges('Here: {"add": ["Likes tea", {"text": "Lives in Oslo", "category": "location"}]} done', known)).toEqual({
      add: [{ text: "Likes tea" }, { text: "Lives in Oslo", category: "location" }],
      update: [],
      remove: [],
    });
    expect(
      parseChanges('```json\n{"remove": ["a1", {"id": "b2"}, "zz"], "update": [{"id": "a1", "text": "x {y}"}]}\n```', known),
    ).toEqual({
      add: [],
      update: [{ id: "a1", text: "x {y}", category: undefined }],
      remove: ["a1", "b2"],
    });
  });
  it("gives up on no object at all, and skips what does not fit", () => {
    expect(parseChanges("nothing to add", known)).toBeUndefined();
    expect(parseChanges("[1, 2]", known)).toBeUndefined();
    expect(parseChanges('{"add": [', known)).toBeUndefined();
    expect(
      parseChanges('{"add": [{"text": ""}, {"txt": "x"}, 7], "update": [{"id": "zz", "text": "y"}, {"id": "a1"}]}', known),
    ).toEqual({
      add: [],
      update: [],
      remove: [],
    });
  });
});

describe("memory: the switch, the chain and the config", () => {
  it("sits after Title and before LoopDetection; the built-in needs a book; an instance replaces it", async () => {
    const book = new MemoryBook(new InMemoryStore());
    const names = (features: Record<string, unknown>) =>
      buildMiddlewareChain({ title: true, dynamicContext: true, ...features }, [], undefined, undefined, {
        memory: { book },
      }).map((m) => m.name);
    expect(names({ memory: true })).toEqual(["DynamicContext", "Title", "Memory", "LoopDetection", "Clarification"]);
    expect(names({})).not.toContain("Memory");
    expect(() => buildMiddlewareChain({ memory: true })).toThrow(/needs a memory book/);
    const mine = createMiddleware({ name: "Memory" });
    expect(buildMiddlewareChain({ memory: mine }).find((m) => m.name === "Memory")).toBe(mine);
  });

  it("a memory.model that is not under models: is a config error naming the key", () => {
    const fake = { url: "http://127.0.0.1:1/v1" } as MockModel;
    expect(() => configFor(fake, { agent: { features: { memory: true }, memory: { model: "cheapo" } } })).toThrow(
      /agent\.memory\.model: no model named "cheapo"/,
    );
    const ok = configFor(fake, { agent: { features: { memory: true }, memory: { model: "" } } });
    expect(ok.agent.memory).toEqual({ max_facts: 50, groups: "off", extraction: true });
  });
});
