import type { RunnableConfig } from "@langchain/core/runnables";
import { MemorySaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { tool } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentHarness, createAntlerAgent } from "../../src/harness/index.js";
import { MESSAGES, toRunError } from "../../src/harness/run-errors.js";
import { freePort } from "../contract/gateway.js";
import { type MockModel, type MockReply, mockModelConfig, startMockModel } from "../fakes/openai.js";
import { collect, deltas, last, runUntil, startHarness, type TestHarness } from "./helpers.js";

let mock: MockModel;
let t: TestHarness;

const slowTool = tool(
  async (_args, config) => {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, 5000);
      config?.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(new Error("aborted"));
      });
    });
    return "done";
  },
  { name: "slow_tool", description: "slow", schema: z.object({}) },
);

beforeEach(async () => {
  mock = await startMockModel();
  t = await startHarness(mock, {}, [slowTool]);
});

afterEach(async () => {
  await t.harness.close();
  await mock.close();
});

/** A message a chat user can read: short, no stack, no URL, no key. */
function expectReadable(message: string) {
  expect(message.length).toBeGreaterThan(10);
  expect(message.length).toBeLessThan(160);
  expect(message).not.toMatch(/https?:|127\.0\.0\.1|sk-|\n\s+at |Error:/);
}

describe("a model that answers too slowly", () => {
  it("ends with a message that says the model took too long", async () => {
    const slow = await startMockModel();
    const h = await startHarness(slow, { models: [{ ...mockModelConfig(slow), timeout: 300 }] });
    try {
      slow.enqueue({ text: "late", firstByteMs: 2000 });
      const end = last(await collect(h.harness.run("t1", "hello")));
      expect(end).toMatchObject({ type: "error", code: "model_error", message: MESSAGES.slow });
    } finally {
      await h.harness.close();
      await slow.close();
    }
  });
});

describe("a model stream that stalls", () => {
  async function stallHarness(model: Record<string, unknown>) {
    const slow = await startMockModel();
    const h = await startHarness(slow, { models: [{ ...mockModelConfig(slow), ...model }] });
    const close = async () => {
      await h.harness.close();
      await slow.close();
    };
    return { slow, h, close };
  }

  it("after text was shown: the run ends within the idle limit with a clear notice; the next run works", async () => {
    // An idle limit a loaded machine's slow chunks stay under; the stall still ends well within 5 s.
    const { slow, h, close } = await stallHarness({ stream_idle_timeout_ms: 1_000 });
    try {
      slow.enqueue({ fault: "stall", afterChunks: 2 });
      const started = Date.now();
      const events = await collect(h.harness.run("t1", "hello"));
      expect(Date.now() - started).toBeLessThan(5000);
      expect(deltas(events).join("")).toBe("part0 part1 ");
      expect(last(events)).toEqual({ type: "error", code: "model_error", message: MESSAGES.stalled });
      expect(slow.requests).toHaveLength(1);
      expect(last(await collect(h.harness.run("t1", "again")))).toMatchObject({ type: "done", text: "ok: again" });
    } finally {
      await close();
    }
  });

  it("before any text: the call is made again once, and the user gets the answer", async () => {
    // Long enough that the second try's first chunk comes within it on a loaded machine.
    const { slow, h, close } = await stallHarness({ stream_idle_timeout_ms: 1_500 });
    try {
      slow.enqueue({ fault: "stall", afterChunks: 0 }, { text: "Second try worked." });
      const events = await collect(h.harness.run("t1", "hello"));
      expect(last(events)).toMatchObject({ type: "done", text: "Second try worked." });
      expect(deltas(events).join("")).toBe("Second try worked.");
      expect(slow.requests).toHaveLength(2);
      slow.enqueue({ fault: "stall", afterChunks: 0 }, { fault: "stall", afterChunks: 0 });
      const twice = await collect(h.harness.run("t2", "hello"));
      expect(last(twice)).toEqual({ type: "error", code: "model_error", message: MESSAGES.stalled });
      expect(slow.requests).toHaveLength(4);
    } finally {
      await close();
    }
  });

  it("models[].timeout bounds the idle time too", async () => {
    const { slow, h, close } = await stallHarness({ timeout: 400 });
    try {
      slow.enqueue({ fault: "stall", afterChunks: 1 });
      const started = Date.now();
      expect(last(await collect(h.harness.run("t1", "hello")))).toMatchObject({ message: MESSAGES.stalled });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await close();
    }
  });
});

describe("model faults", () => {
  const cases: Array<[string, MockReply, string]> = [
    ["HTTP 500", { fault: "http500" }, "model_error"],
    ["HTTP 429", { fault: "http429", retryAfterS: 1 }, "rate_limited"],
    ["HTTP 401", { fault: "http401" }, "model_error"],
    ["a disconnect mid-stream", { fault: "disconnect", afterChunks: 2 }, "model_error"],
    ["a malformed chunk", { fault: "malformed", afterChunks: 1 }, "model_error"],
  ];
  for (const [name, fault, code] of cases) {
    it(`${name} ends the run with a readable ${code} error, and the next run works`, async () => {
      mock.enqueue(fault);
      const events = await collect(t.harness.run("t1", "hello"));
      const end = last(events);
      expect(end).toMatchObject({ type: "error", code });
      expectReadable(end.type === "error" ? end.message : "");
      const next = await collect(t.harness.run("t1", "again"));
      expect(last(next)).toMatchObject({ type: "done", text: "ok: again" });
      expect((await t.harness.getThread("t1"))?.running).toBe(false);
    });
  }

  it("names the cause a user or operator can act on, and no fault puts the API key in the log", async () => {
    const faults: Array<[MockReply, RegExp]> = [
      [{ fault: "http401" }, /rejected our API key.*api_key.*OPENAI_API_KEY/],
      [{ fault: "http429" }, /too many requests/],
      [{ fault: "http500" }, /service had an error/],
      [{ fault: "disconnect", afterChunks: 1 }, /connection .* broke off/],
    ];
    for (const [fault, text] of faults) {
      mock.enqueue(fault);
      const end = last(await collect(t.harness.run("t1", "hello")));
      expect(end.type === "error" && end.message).toMatch(text);
    }
    expect(t.logs.some((l) => l.msg === "run failed")).toBe(true);
    // The provider's 401 quotes the key masked (first 3 and last 4 characters); the key itself never shows.
    expect(JSON.stringify(t.logs)).not.toContain("mock-not-a-sec");
  });

  it("keeps the text the user already saw of a broken turn in the history", async () => {
    mock.enqueue({ fault: "disconnect", afterChunks: 2 });
    const events = await collect(t.harness.run("t1", "hello"));
    expect(deltas(events).join("")).toBe("part0 part1 ");
    await collect(t.harness.run("t1", "again"));
    const sent = mock.requests[1]?.messages.map((m) => `${m.role}:${m.content}`);
    expect(sent?.slice(1)).toEqual(["user:hello", "assistant:part0 part1 ", "user:again"]);
  });
});

describe("a model endpoint that cannot be used", () => {
  it("connection refused, a stream cut mid-reply and a refused key each get their own notice, naming what to set", async () => {
    mock.enqueue({ fault: "http401" }, { fault: "disconnect", afterChunks: 1 });
    const key = last(await collect(t.harness.run("t1", "hello")));
    const cut = last(await collect(t.harness.run("t2", "hello")));
    const port = await freePort();
    const h = await startHarness(mock, { models: [{ ...mockModelConfig(mock), base_url: `http://127.0.0.1:${port}/v1` }] });
    try {
      const refused = last(await collect(h.harness.run("t3", "hello")));
      const notices = [key, cut, refused].map((e) => (e.type === "error" ? [e.code, e.message] : [e.type]));
      expect(notices).toEqual([
        ["model_error", MESSAGES.auth],
        ["model_error", MESSAGES.disconnect],
        ["model_error", MESSAGES.unreachable],
      ]);
      expect((await h.harness.status()).reachable).toBe(false);
    } finally {
      await h.harness.close();
    }
    expect(MESSAGES.unreachable).toMatch(/base_url.*OPENAI_BASE_URL/);
    expect(MESSAGES.auth).toMatch(/api_key.*OPENAI_API_KEY/);
    for (const text of [MESSAGES.auth, MESSAGES.unreachable]) expectReadable(text);
  });

  it("an unknown host, a refused address among several, or a reset connection", () => {
    const wrapped = (cause: unknown) => Object.assign(new Error("Connection error."), { name: "APIConnectionError", cause });
    const dns = new TypeError("fetch failed", {
      cause: Object.assign(new Error("getaddrinfo ENOTFOUND llm.invalid"), { code: "ENOTFOUND" }),
    });
    const both = new AggregateError([Object.assign(new Error("connect ECONNREFUSED ::1:9"), { code: "ECONNREFUSED" })], "");
    const reset = new TypeError("terminated", { cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }) });
    expect(toRunError(wrapped(dns), false).message).toBe(MESSAGES.unreachable);
    expect(toRunError(wrapped(new TypeError("fetch failed", { cause: both })), false).message).toBe(MESSAGES.unreachable);
    expect(toRunError(wrapped(reset), false).message).toBe(MESSAGES.disconnect);
  });

  it("status(true) probes the endpoint and names the problem with its URL for the operator", async () => {
    const port = await freePort();
    const dead = { ...mockModelConfig(mock), base_url: `http://127.0.0.1:${port}/v1` };
    const h = await startHarness(mock, { models: [dead] });
    try {
      expect(await h.harness.status()).toMatchObject({ reachable: true, last_error: null });
      const status = await h.harness.status(true);
      expect(status.reachable).toBe(false);
      expect(status.last_error?.message).toMatch(
        new RegExp(`model mock: http://127\\.0\\.0\\.1:${port}/v1/models is not reachable .*ECONNREFUSED.*base_url`),
      );
      expect(status.last_error?.message).not.toContain("sk-mock");
    } finally {
      await h.harness.close();
    }
  });
});

describe("cancel and concurrency", () => {
  it("cancel() ends the active run with a cancelled error; the thread stays usable", async () => {
    expect(t.harness.cancel("t1")).toBe(false);
    mock.enqueue({ text: "a long answer that keeps streaming for a while", chunkSize: 2, delayMs: 20 });
    let cancelled: boolean | undefined;
    const events = await runUntil(
      t.harness.run("t1", "talk"),
      (e) => e.type === "text",
      () => {
        cancelled = t.harness.cancel("t1");
      },
    );
    expect(cancelled).toBe(true);
    expect(last(events)).toMatchObject({ type: "error", code: "cancelled" });
    expect(deltas(events).join("").length).toBeLessThan(20);
    expect(last(await collect(t.harness.run("t1", "again")))).toMatchObject({ type: "done", text: "ok: again" });
  });

  it("an aborted signal cancels too, also while a tool runs; the unanswered call is closed", async () => {
    mock.enqueue({ toolCalls: [{ name: "slow_tool", args: {}, id: "call_slow" }] });
    const controller = new AbortController();
    const events = await runUntil(
      t.harness.run("t1", "work", { signal: controller.signal }),
      (e) => e.type === "tool_start",
      () => controller.abort(),
    );
    expect(last(events)).toMatchObject({ type: "error", code: "cancelled" });
    // The mock rejects unanswered tool calls like OpenAI does, so this only passes if repaired.
    expect(last(await collect(t.harness.run("t1", "again")))).toMatchObject({ type: "done", text: "ok: again" });
    const toolMsg = mock.requests[1]?.messages.find((m) => m.role === "tool");
    expect(toolMsg).toMatchObject({ tool_call_id: "call_slow" });
  });

  it("a second run on a busy thread gets a busy error; other threads run", async () => {
    mock.enqueue({ text: "slow slow slow slow", chunkSize: 2, delayMs: 20 });
    const iterator = t.harness.run("t1", "first")[Symbol.asyncIterator]();
    const firstEvent = await iterator.next();
    expect(firstEvent.value).toMatchObject({ type: "text" });
    expect((await t.harness.getThread("t1"))?.running).toBe(true);
    expect(await collect(t.harness.run("t1", "second"))).toEqual([{ type: "error", code: "busy", message: expect.any(String) }]);
    expect(last(await collect(t.harness.run("t2", "other")))).toMatchObject({ type: "done", text: "ok: other" });
    let rest = await iterator.next();
    while (!rest.done) rest = await iterator.next();
    expect((await t.harness.getThread("t1"))?.running).toBe(false);
  });
});

describe("a caller that stops reading early", () => {
  it("mid-tool: the run is stopped and repaired, so the next run works without the dangling-call feature", async () => {
    await t.harness.close();
    // The harness's own repair must close the call; the request-time patch is switched off here.
    t = await startHarness(mock, { agent: { features: { dangling_tool_calls: false } } }, [slowTool]);
    mock.enqueue({ toolCalls: [{ name: "slow_tool", args: {}, id: "call_left" }] });
    for await (const e of t.harness.run("t1", "work")) if (e.type === "tool_start") break;
    expect((await t.harness.getThread("t1"))?.running).toBe(false);
    expect(last(await collect(t.harness.run("t1", "again")))).toMatchObject({ type: "done", text: "ok: again" });
    expect(mock.requests[1]?.messages.find((m) => m.role === "tool")).toMatchObject({ tool_call_id: "call_left" });
  });

  it("mid-text: the text the caller already read stays in the history", async () => {
    mock.enqueue({ text: "first part, then more and more", chunkSize: 5, delayMs: 20 });
    const seen: string[] = [];
    for await (const e of t.harness.run("t1", "talk")) {
      if (e.type === "text") seen.push(e.delta);
      if (seen.length === 2) break;
    }
    await collect(t.harness.run("t1", "again"));
    const sent = mock.requests[1]?.messages.map((m) => `${m.role}:${m.content}`);
    expect(sent?.slice(1)).toEqual(["user:talk", `assistant:${seen.join("")}`, "user:again"]);
  });
});

describe("repair after the graph ran ahead of its reader", () => {
  it("a turn already stored is not written a second time as partial text", async () => {
    mock.enqueue({ text: "abcdefgh", chunkSize: 2 });
    for await (const e of t.harness.run("t1", "go")) {
      if (e.type !== "text") continue;
      // The graph streams into a buffer: wait until it stored the turn the reader is still reading.
      while ((await t.harness.getThread("t1"))?.messageCount !== 2) await new Promise((r) => setTimeout(r, 5));
      break;
    }
    await collect(t.harness.run("t1", "again"));
    const sent = mock.requests[1]?.messages.map((m) => `${m.role}:${m.content}`);
    expect(sent?.slice(1)).toEqual(["user:go", "assistant:abcdefgh", "user:again"]);
  });
});

describe("a run stopped by a timeout", () => {
  it("ends with a timeout error, not a cancel, and the thread stays usable", async () => {
    mock.enqueue({ toolCalls: [{ name: "slow_tool", args: {}, id: "call_t" }] });
    const controller = new AbortController();
    const events = await runUntil(
      t.harness.run("t1", "work", { signal: controller.signal }),
      (e) => e.type === "tool_start",
      () => controller.abort(new DOMException("the run took too long", "TimeoutError")),
    );
    expect(last(events)).toMatchObject({ type: "error", code: "timeout" });
    expectReadable(last(events).type === "error" ? (last(events) as { message: string }).message : "");
    expect(last(await collect(t.harness.run("t1", "again")))).toMatchObject({ type: "done", text: "ok: again" });
  });

  it("a signal that already timed out ends the run before the model is called", async () => {
    const events = await collect(
      t.harness.run("t1", "work", { signal: AbortSignal.abort(new DOMException("late", "TimeoutError")) }),
    );
    expect(events).toEqual([{ type: "error", code: "timeout", message: expect.any(String) }]);
    expect(mock.requests).toHaveLength(0);
  });
});

describe("a run a new message interrupted", () => {
  it("ends with an interrupted error that leaves the agent's health as it was", async () => {
    mock.enqueue({ toolCalls: [{ name: "slow_tool", args: {}, id: "call_i" }] });
    const controller = new AbortController();
    const events = await runUntil(
      t.harness.run("t1", "work", { signal: controller.signal }),
      (e) => e.type === "tool_start",
      () => controller.abort(new DOMException("a new message interrupted the reply", "InterruptError")),
    );
    expect(last(events)).toMatchObject({ type: "error", code: "interrupted" });
    expect(await t.harness.status()).toMatchObject({ reachable: true, last_error: null });
  });
});

describe("a storage failure", () => {
  it("ends the run with one error event instead of a throwing iterable; the next run works", async () => {
    let broken = true;
    class FlakySaver extends MemorySaver {
      override async getTuple(config: RunnableConfig) {
        if (broken) throw new Error("SQLITE_BUSY: database is locked");
        return super.getTuple(config);
      }
    }
    const model = new ChatOpenAI({ model: "mock-model", apiKey: "sk-test", configuration: { baseURL: mock.url }, maxRetries: 0 });
    const harness = new AgentHarness({ agent: createAntlerAgent({ model, checkpointer: new FlakySaver() }), modelName: "mock" });
    const events = await collect(harness.run("t1", "hello"));
    expect(events).toEqual([{ type: "error", code: "internal", message: expect.any(String) }]);
    expect(harness.cancel("t1")).toBe(false);
    broken = false;
    expect(last(await collect(harness.run("t1", "again")))).toMatchObject({ type: "done", text: "ok: again" });
  });
});
