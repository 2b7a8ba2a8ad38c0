/**
 * Steering a running turn (`Harness.steer`) on the two local backends: the embedded agent built
 * from config, and a user's hand-written graph (a model node and a ToolNode named `tools`) on the
 * graph backend. Both drain the run at the step boundary after the tools step (steer/local.ts).
 */
import path from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/loader.js";
import { AgentHarness, createAgentBackend, createAntlerAgent } from "../../src/harness/index.js";
import { STEERED_KEY } from "../../src/harness/steer/boundary.js";
import type { RunEvent } from "../../src/harness/types.js";
import { waitTool } from "../../src/testing/tools.js";
import { mockChatModel } from "../fakes/langgraph/graphs.js";
import { startMockModel } from "../fakes/openai.js";
import { collect, last, memoryLogger, startHarness, tempDir } from "./helpers.js";
import { steerCases } from "./steer-cases.js";

steerCases("embedded", async () => {
  const mock = await startMockModel();
  const { harness } = await startHarness(mock, {}, [waitTool()]);
  return {
    harness,
    mock,
    close: async () => {
      await harness.close();
      await mock.close();
    },
  };
});

steerCases("graph (a hand-written tool loop)", async () => {
  const mock = await startMockModel();
  const config = parseConfig(
    stringify({
      storage: { path: path.join(tempDir(), "antler.db") },
      models: [{ name: "mock", use: "@langchain/openai:ChatOpenAI", model: "mock-model", api_key: "sk-x", base_url: mock.url }],
      agent: { backend: "graph", graph: "./user-graphs.ts:toolLoop" },
    }),
    {},
  );
  const harness = await createAgentBackend({
    config,
    baseDir: path.join(import.meta.dirname, "fixtures"),
    logger: memoryLogger().logger,
  });
  return {
    harness,
    mock,
    close: async () => {
      await harness.close();
      await mock.close();
    },
  };
});

describe("steer: the embedded agent's thread", () => {
  async function direct() {
    const mock = await startMockModel();
    const checkpointer = new MemorySaver();
    const agent = createAntlerAgent({ model: mockChatModel(mock.url), tools: [waitTool()], checkpointer });
    const harness = new AgentHarness({ agent, modelName: "mock" });
    const messages = async (thread: string) =>
      ((await agent.graph.getState({ configurable: { thread_id: thread } })).values as { messages: BaseMessage[] }).messages;
    const close = async () => {
      await harness.close();
      await mock.close();
    };
    return { mock, harness, messages, close };
  }

  it("keeps the steered message as a user message marked as steered, after the tool result", async () => {
    const s = await direct();
    try {
      s.mock.enqueue({ toolCalls: [{ name: "wait", args: { ms: 300 } }] }, { text: "both checked" });
      let steered: Promise<string> | undefined;
      for await (const e of s.harness.run("t1", "check prod", { steerable: true })) {
        if (e.type === "tool_start") steered = s.harness.steer("t1", "also check staging");
      }
      expect(await steered).toBe("taken");
      const stored = await s.messages("t1");
      expect(stored.map((m) => m.type)).toEqual(["human", "ai", "tool", "human", "ai"]);
      expect(stored[3]?.text).toBe("also check staging");
      expect(stored[3]?.additional_kwargs).toMatchObject({ [STEERED_KEY]: true });
      expect(stored[0]?.additional_kwargs?.[STEERED_KEY]).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  it("with tool calls running side by side, the message goes in after the last one's result", async () => {
    const s = await direct();
    try {
      s.mock.enqueue({
        toolCalls: [
          { name: "wait", args: { ms: 100 } },
          { name: "wait", args: { ms: 700 } },
        ],
      });
      let steered: Promise<string> | undefined;
      const events: RunEvent[] = [];
      for await (const e of s.harness.run("t3", "check both", { steerable: true })) {
        events.push(e);
        if (e.type === "tool_start" && !steered) steered = s.harness.steer("t3", "and the logs");
      }
      expect(await steered).toBe("taken");
      expect(last(events)).toMatchObject({ type: "done", text: "ok: and the logs" });
      expect((await s.messages("t3")).map((m) => m.type)).toEqual(["human", "ai", "tool", "tool", "human", "ai"]);
      expect(s.mock.requests).toHaveLength(2);
    } finally {
      await s.close();
    }
  });

  it("a cancel while a steered message waits ends the run cancelled, the message missed, and the thread works", async () => {
    const s = await direct();
    try {
      s.mock.enqueue({ toolCalls: [{ name: "wait", args: { ms: 5_000 } }] });
      let steered: Promise<string> | undefined;
      const events: RunEvent[] = [];
      for await (const e of s.harness.run("t2", "check prod", { steerable: true })) {
        events.push(e);
        if (e.type === "tool_start") {
          steered = s.harness.steer("t2", "also check staging");
          setTimeout(() => s.harness.cancel("t2"), 100);
        }
      }
      expect(last(events)).toMatchObject({ type: "error", code: "cancelled" });
      expect(await steered).toBe("missed");
      expect((await s.messages("t2")).some((m) => m.text === "also check staging")).toBe(false);
      expect(last(await collect(s.harness.run("t2", "again")))).toMatchObject({ type: "done", text: "ok: again" });
    } finally {
      await s.close();
    }
  });
});
