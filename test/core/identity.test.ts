/**
 * Who a run serves: the person id (platform id scoped by tenant and channel) and the DeerFlow
 * identity keys a local graph finds in its `configurable` and its run context.
 */
import { AIMessage } from "@langchain/core/messages";
import { Annotation, MemorySaver, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { personId, runUser } from "../../src/core/identity.js";
import { AgentHarness } from "../../src/harness/index.js";
import { collect } from "../harness/helpers.js";

describe("personId", () => {
  it("scopes the platform id by tenant and channel, in DeerFlow's user-id characters", () => {
    expect(personId("default", "telegram", "4711")).toBe("default-telegram-4711");
    expect(personId("default", "slack", "4711")).not.toBe(personId("default", "telegram", "4711"));
    expect(personId("acme", "telegram", "4711")).not.toBe(personId("default", "telegram", "4711"));
    for (const id of [personId("t", "web", "a:b/c@d"), personId("t.x", "tg main", "ou_x")]) {
      expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    }
  });

  it("never gives two (tenant, channel, user) the same id, whatever dashes they hold", () => {
    const a = personId("acme", "tg-main", "1");
    const b = personId("acme-tg", "main", "1");
    const c = personId("acme", "tg", "main-1");
    expect(new Set([a, b, c]).size).toBe(3);
    expect(personId("t", "web", "a:b")).not.toBe(personId("t", "web", "a_b"));
    expect(personId("t", "web", "a:b")).toBe(personId("t", "web", "a:b"));
  });

  it("runUser carries the channel, the chat type and the person id", () => {
    expect(runUser({ tenant: "default", name: "tg" }, { id: "7", name: "Ada" }, "dm")).toEqual({
      id: "7",
      name: "Ada",
      channel: "tg",
      chatType: "dm",
      personId: "default-tg-7",
    });
    expect(runUser({ tenant: "default", name: "tg" }, { id: "antler:api", name: "API" }, "dm").personId).toBeUndefined();
  });
});

describe("identity in a local run", () => {
  it("a user's graph reads user_id, channel_user_id, channel_name and chat_type from configurable and context", async () => {
    const seen: unknown[] = [];
    const graph = new StateGraph(MessagesAnnotation, Annotation.Root({ user_id: Annotation<string> }))
      .addNode("reply", (_state, runtime) => {
        const r = runtime as { configurable?: Record<string, unknown>; context?: Record<string, unknown> };
        seen.push({ configurable: r.configurable?.user_id, context: r.context });
        return { messages: [new AIMessage({ content: "ok", id: "a1" })] };
      })
      .addEdge("__start__", "reply")
      .compile({ checkpointer: new MemorySaver() });
    const harness = new AgentHarness({ agent: graph, modelName: "graph", backend: "graph" });
    const user = runUser({ tenant: "default", name: "tg" }, { id: "7", name: "Ada" }, "group");
    await collect(harness.run("t1", "hi", { user }));
    await harness.close();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      configurable: "default-tg-7",
      context: { user_id: "default-tg-7", channel_user_id: "7", channel_name: "tg", chat_type: "group" },
    });
  });
});
