import path from "node:path";
import { ChatOpenAI } from "@langchain/openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, ReflectionError } from "../../src/errors.js";
import { createChatModel, createHarness, makeLeadAgent } from "../../src/harness/index.js";
import { type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";
import { collect, configFor, last, memoryLogger, tempDir } from "./helpers.js";

let mock: MockModel;
beforeEach(async () => {
  mock = await startMockModel();
});
afterEach(async () => {
  await mock.close();
});

describe("models from config", () => {
  it("a use: naming a package that is not installed fails at startup with the install command", async () => {
    const config = configFor(mock, {
      models: [{ name: "claude", use: "@langchain/anthropic:ChatAnthropic", model: "claude-x", api_key: "k" }],
    });
    const { logger } = memoryLogger();
    const failure = createHarness({ config, baseDir: tempDir(), logger });
    await expect(failure).rejects.toBeInstanceOf(ReflectionError);
    await expect(failure).rejects.toThrow(/npm install @langchain\/anthropic$/);
  });

  it("maps the config keys to ChatOpenAI options and keeps max_retries", async () => {
    const config = configFor(mock, {
      models: [
        { ...mockModelConfig(mock, "a"), temperature: 0.3, max_tokens: 99, max_retries: 4, top_p: 0.5 },
        { ...mockModelConfig(mock, "b"), model: "other-model" },
      ],
    });
    const model = (await createChatModel(config)) as ChatOpenAI;
    expect(model).toBeInstanceOf(ChatOpenAI);
    expect(model.model).toBe("mock-model");
    expect(model.temperature).toBe(0.3);
    expect(model.maxTokens).toBe(99);
    expect(model.topP).toBe(0.5);
    expect((model as unknown as { caller: { maxRetries: number } }).caller.maxRetries).toBe(4);
    expect(((await createChatModel(config, "b")) as ChatOpenAI).model).toBe("other-model");
    const reply = await model.invoke("ping");
    expect(reply.text).toBe("ok: ping");
  });

  it("an unknown model name falls back to the first model with a warning", async () => {
    const config = configFor(mock, { models: [mockModelConfig(mock, "first"), mockModelConfig(mock, "second")] });
    const { logger, logs } = memoryLogger();
    const lead = await makeLeadAgent({ ...config, agent: { ...config.agent, model: "nope" } }, { logger });
    expect(lead.modelName).toBe("first");
    expect(logs.some((l) => l.level === 40 && String(l.msg).includes("unknown model name"))).toBe(true);
  });

  it("no model at all is a config error naming models", async () => {
    const config = configFor(mock, { models: [] });
    await expect(createChatModel(config)).rejects.toBeInstanceOf(ConfigError);
    await expect(createChatModel(config)).rejects.toThrow(/^models: /);
  });

  it("supports_thinking: false keeps thinking options off", async () => {
    const entry = { ...mockModelConfig(mock), supports_thinking: false, when_thinking_enabled: { top_p: 0.1 } };
    const config = configFor(mock, { models: [entry] });
    const off = (await createChatModel(config, undefined, { thinking: true })) as ChatOpenAI;
    expect(off.topP).not.toBe(0.1);
    const on = configFor(mock, { models: [{ ...entry, supports_thinking: true }] });
    expect(((await createChatModel(on, undefined, { thinking: true })) as ChatOpenAI).topP).toBe(0.1);
  });
});

describe("tools from config", () => {
  it("loads a StructuredTool by relative path; the model can call it; a name mismatch only warns", async () => {
    // Relative to baseDir (the config's folder); the database goes to a temp folder.
    const config = configFor(mock, {
      storage: { path: path.join(tempDir(), "antler.db") },
      tools: [{ name: "echo_tool", use: "./fixtures/tools.mjs:echoTool" }],
    });
    const { logger, logs } = memoryLogger();
    const harness = await createHarness({ config, baseDir: import.meta.dirname, logger });
    expect(logs.some((l) => l.level === 40 && l.configured === "echo_tool" && l.actual === "echo")).toBe(true);
    expect(mock.requests).toHaveLength(0);
    mock.enqueue({ toolCalls: [{ name: "echo", args: { text: "hi" }, id: "call_e" }] }, { text: "done" });
    const events = await collect(harness.run("t", "echo hi"));
    expect(events.find((e) => e.type === "tool_end")).toMatchObject({ output: "echo: hi", error: false });
    expect(last(events)).toMatchObject({ type: "done", text: "done" });
    expect(mock.requests[0]?.tools?.map((t) => t.function.name).sort()).toEqual(["ask_clarification", "echo"]);
    await harness.close();
  });

  it("an export that is not a StructuredTool is refused", async () => {
    const config = configFor(mock, {
      tools: [{ name: "echo", use: `${path.join(import.meta.dirname, "fixtures/tools.mjs")}:notATool` }],
    });
    const { logger } = memoryLogger();
    await expect(createHarness({ config, baseDir: tempDir(), logger })).rejects.toThrow(/not an instance of StructuredTool/);
  });
});
