/**
 * Token budgets (`max_tool_calls_per_run`, `max_tokens_per_run`) on the embedded and graph
 * backends, against the mock model: the model's requests carry the warning and the stop note,
 * calls past a limit never run, `done.limit` says the run was cut, and the next run on the thread
 * works (the mock refuses a history with an unanswered tool call).
 */
import path from "node:path";
import { tool } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { z } from "zod";
import { parseConfig } from "../../src/config/loader.js";
import { createAgentBackend, type Harness } from "../../src/harness/index.js";
import type { RunEvent } from "../../src/harness/types.js";
import { type ChatCompletionRequest, contentText, type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, configFor, last, memoryLogger, startHarness, tempDir } from "./helpers.js";

const FIXTURES = path.join(import.meta.dirname, "fixtures");

let mock: MockModel;
let harness: Harness | undefined;
const looked: string[] = [];
const lookup = tool(
  async ({ q }) => {
    looked.push(q);
    return `result for ${q}`;
  },
  { name: "lookup", description: "Look something up.", schema: z.object({ q: z.string() }) },
);

beforeEach(async () => {
  mock = await startMockModel();
  looked.length = 0;
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await mock.close();
});

const calls = (...qs: string[]) => ({ toolCalls: qs.map((q) => ({ name: "lookup", args: { q } })) });
/** The budget notes (`[limit] …`) the request ends with, if any. */
const notes = (req: ChatCompletionRequest | undefined) =>
  (req?.messages ?? [])
    .filter((m) => m.role === "user" && contentText(m.content).startsWith("[limit]"))
    .map((m) => contentText(m.content));
const started = (events: RunEvent[]) => events.flatMap((e) => (e.type === "tool_start" ? [(e.args as { q: string }).q] : []));

describe("max_tool_calls_per_run", () => {
  it("runs the calls that fit, drops the rest, tells the model to answer, and ends with done.limit", async () => {
    ({ harness } = await startHarness(mock, { agent: { max_tool_calls_per_run: 3 } }, [lookup]));
    mock.enqueue(calls("a", "b"), calls("c", "d"), { text: "Here is what I found." });
    const events = await collect(harness.run("t1", "research this"));

    expect(looked).toEqual(["a", "b", "c"]);
    expect(started(events), "a dropped call never starts").toEqual(["a", "b", "c"]);
    expect(last(events)).toEqual(
      expect.objectContaining({ type: "done", text: "Here is what I found.", limit: { kind: "tool_calls", max: 3 } }),
    );
    expect(notes(mock.requests[0])).toEqual([]);
    expect(notes(mock.requests[1]), "2 of 3 is under 80%").toEqual([]);
    expect(notes(mock.requests[2])).toEqual([
      "[limit] This request has used its limit of 3 tool calls. No more tool calls will run: answer now with what you have, and say what is left undone.",
    ]);

    // The thread stays usable, and the next message counts from zero.
    mock.enqueue(calls("e"), { text: "fresh" });
    const next = await collect(harness.run("t1", "and now this"));
    expect(last(next)).toEqual(expect.objectContaining({ type: "done", text: "fresh" }));
    expect(last(next)).not.toHaveProperty("limit");
    expect(looked).toEqual(["a", "b", "c", "e"]);
    expect(mock.requests.slice(3).flatMap(notes)).toEqual([]);
  });

  it("warns from 80%, and drops calls the model still makes at the limit", async () => {
    ({ harness } = await startHarness(mock, { agent: { max_tool_calls_per_run: 5 } }, [lookup]));
    mock.enqueue(calls("a", "b", "c", "d"), calls("e"), calls("f", "g"));
    const events = await collect(harness.run("t2", "go"));

    expect(looked).toEqual(["a", "b", "c", "d", "e"]);
    expect(notes(mock.requests[1])).toEqual([
      "[limit] This request has used 4 of its 5 tool calls. Wrap up: make only the tool calls you really need, then answer.",
    ]);
    expect(notes(mock.requests[2])[0]).toContain("used its limit of 5 tool calls");
    expect(mock.requests).toHaveLength(3);
    expect(last(events)).toEqual(expect.objectContaining({ type: "done", text: "", limit: { kind: "tool_calls", max: 5 } }));
    mock.enqueue({ text: "still here" });
    expect(last(await collect(harness.run("t2", "hello?")))).toEqual(
      expect.objectContaining({ type: "done", text: "still here" }),
    );
  });

  it("a run within its limit ends without limit, and without notes", async () => {
    ({ harness } = await startHarness(mock, { agent: { max_tool_calls_per_run: 10 } }, [lookup]));
    mock.enqueue(calls("a"), { text: "done" });
    const done = last(await collect(harness.run("t3", "one lookup")));
    expect(done).toEqual(expect.objectContaining({ type: "done", text: "done" }));
    expect(done).not.toHaveProperty("limit");
    expect(mock.requests.flatMap(notes)).toEqual([]);
  });
});

describe("max_tokens_per_run", () => {
  const used = (total: number) => ({ prompt_tokens: total - 10, completion_tokens: 10, total_tokens: total });

  it("counts the tokens the model reports: a warning, then the stop, then done.limit", async () => {
    ({ harness } = await startHarness(mock, { agent: { max_tokens_per_run: 1000 } }, [lookup]));
    mock.enqueue(
      { ...calls("a"), usage: used(850) },
      { ...calls("b"), usage: used(300) },
      { ...calls("c"), usage: used(100) },
      { text: "after the cut", usage: used(50) },
    );
    const events = await collect(harness.run("t4", "spend"));

    expect(notes(mock.requests[1])).toEqual([
      "[limit] This request has used 850 of its 1,000 tokens. Wrap up: make only the tool calls you really need, then answer.",
    ]);
    expect(notes(mock.requests[2])[0]).toContain("used its limit of 1,000 tokens");
    expect(looked, "the call of the turn that crossed the limit ran; the one after it did not").toEqual(["a", "b"]);
    expect(last(events)).toEqual(expect.objectContaining({ type: "done", limit: { kind: "tokens", max: 1000 } }));
    expect(mock.pending()).toBe(1);
  });

  it("is refused when not a positive whole number", () => {
    expect(() => parseConfig(stringify({ agent: { max_tokens_per_run: 0 } }), {})).toThrow(/agent\.max_tokens_per_run/);
    expect(() => parseConfig(stringify({ agent: { max_tool_calls_per_run: "many" } }), {})).toThrow(
      /agent\.max_tool_calls_per_run/,
    );
  });
});

describe("on the graph backend", () => {
  it("the factory's budget middleware cuts the run, and done.limit says so", async () => {
    const config = configFor(mock, {
      storage: { path: path.join(tempDir(), "antler.db") },
      agent: { backend: "graph", graph: "./user-graphs.ts:budgetedAgent", max_tool_calls_per_run: 1 },
    });
    harness = await createAgentBackend({ config, baseDir: FIXTURES, logger: memoryLogger().logger });
    const weather = (...cities: string[]) => ({ toolCalls: cities.map((city) => ({ name: "lookup_weather", args: { city } })) });
    mock.enqueue(weather("Oslo", "Rome"), { text: "Sunny in Oslo; I did not get to Rome." });
    const events = await collect(harness.run("g1", "weather in Oslo and Rome"));
    expect(events.filter((e) => e.type === "tool_end").map((e) => (e as { output: string }).output)).toEqual([
      "It is sunny in Oslo.",
    ]);
    expect(last(events)).toEqual(
      expect.objectContaining({
        type: "done",
        text: "Sunny in Oslo; I did not get to Rome.",
        limit: { kind: "tool_calls", max: 1 },
      }),
    );
    mock.enqueue({ text: "ok" });
    expect(last(await collect(harness.run("g1", "thanks")))).toEqual(expect.objectContaining({ type: "done", text: "ok" }));
  });
});
