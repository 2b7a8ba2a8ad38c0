/**
 * Smoke test of the in-process LangGraph API server fixture, through the real SDK `Client`:
 * streaming, the three graphs, interrupts and resumes, cancellation, the API key, runCount,
 * and a second start after close.
 */
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockModel, startMockModel } from "../openai.js";
import { QUESTION_INTERRUPT, SLOW_TOOL_MS, slowToolStats } from "./graphs.js";
import { type LangGraphServer, startLangGraphServer } from "./server.js";

interface Event {
  event: string;
  data: unknown;
}
interface MessageDict {
  type?: string;
  content?: unknown;
  name?: string;
  tool_call_id?: string;
}
type Payload = Parameters<Client["runs"]["stream"]>[2];

let mock: MockModel;
let lg: LangGraphServer;

beforeAll(async () => {
  mock = await startMockModel();
  lg = await startLangGraphServer({ modelUrl: mock.url });
});

afterAll(async () => {
  await lg?.close();
  await mock?.close();
});

async function stream(threadId: string, graph: string, payload: Payload): Promise<Event[]> {
  const events: Event[] = [];
  for await (const e of lg.client.runs.stream(threadId, graph, {
    streamMode: ["messages-tuple", "updates", "values"],
    ...payload,
  }))
    events.push(e as Event);
  return events;
}

const input = (text: string) => ({ input: { messages: [{ role: "user", content: text }] } });

/** Concatenated text of the model's streamed message chunks. */
function streamedText(events: Event[]): string {
  return events
    .filter((e) => e.event === "messages")
    .map((e) => e.data as [MessageDict, Record<string, unknown>])
    .filter(([, meta]) => meta.langgraph_node === "model_request" || meta.langgraph_node === "model")
    .map(([m]) => (typeof m.content === "string" ? m.content : ""))
    .join("");
}

function interrupts(events: Event[]): Array<{ id: string; value: unknown }> {
  return events.flatMap((e) => {
    const data = e.data as Record<string, unknown> | null;
    return e.event === "updates" && data && "__interrupt__" in data
      ? (data.__interrupt__ as Array<{ id: string; value: unknown }>)
      : [];
  });
}

function finalMessages(events: Event[]): MessageDict[] {
  const values = events.filter((e) => e.event === "values").map((e) => e.data as { messages?: MessageDict[] });
  return [...values].reverse().find((v) => v.messages)?.messages ?? [];
}

describe("LangGraph API server fixture", () => {
  it("streams the mock model's text from the agent graph", async () => {
    const { thread_id } = await lg.client.threads.create();
    mock.enqueue({ text: "Hello from the mock model.", chunkSize: 5 });
    const events = await stream(thread_id, "agent", input("hi"));
    expect(events[0]).toMatchObject({ event: "metadata", data: { run_id: expect.any(String) } });
    expect(streamedText(events)).toBe("Hello from the mock model.");
    expect(finalMessages(events).at(-1)).toMatchObject({ type: "ai", content: "Hello from the mock model." });
  });

  it("runs lookup_weather", async () => {
    const { thread_id } = await lg.client.threads.create();
    mock.enqueue({ toolCalls: [{ name: "lookup_weather", args: { city: "Oslo" }, id: "call_w" }] });
    const events = await stream(thread_id, "agent", input("weather?"));
    const messages = finalMessages(events);
    expect(messages.find((m) => m.type === "tool")).toMatchObject({ name: "lookup_weather", content: "It is sunny in Oslo." });
    expect(messages.at(-1)).toMatchObject({ type: "ai", content: "ok: weather?" });
  });

  it("pauses the agent on ask_clarification and resumes by command", async () => {
    const { thread_id } = await lg.client.threads.create();
    const ask = { question: "Which city?", options: ["Paris", "Rome"] };
    mock.enqueue({ toolCalls: [{ name: "ask_clarification", args: ask, id: "call_q" }] });
    const first = await stream(thread_id, "agent", input("book a trip"));
    expect(interrupts(first)).toEqual([{ id: expect.any(String), value: ask }]);
    const runs = await lg.client.runs.list(thread_id);
    expect(runs.map((r) => r.status)).toEqual(["success"]);
    expect((await lg.client.threads.get(thread_id)).status).toBe("interrupted");

    mock.enqueue({ text: "Paris it is." });
    const second = await stream(thread_id, "agent", { command: { resume: "Paris" } });
    expect(interrupts(second)).toEqual([]);
    expect(streamedText(second)).toBe("Paris it is.");
    const tool = mock.requests.at(-1)?.messages.find((m) => m.role === "tool");
    expect(tool).toMatchObject({ tool_call_id: "call_q", content: "Paris" });
  });

  it("interrupts the question graph with a non-clarification value and resumes", async () => {
    const { thread_id } = await lg.client.threads.create();
    const first = await stream(thread_id, "question", input("publish it"));
    expect(interrupts(first).map((i) => i.value)).toEqual([QUESTION_INTERRUPT]);
    const second = await stream(thread_id, "question", { command: { resume: "yes" } });
    expect(finalMessages(second).at(-1)).toMatchObject({ type: "ai", content: "Published (answer: yes)." });
  });

  it("ends the deerflow graph on a ToolMessage, without an interrupt; the answer is a new run", async () => {
    const { thread_id } = await lg.client.threads.create();
    const args = { question: "Which format?", clarification_type: "approach_choice", options: ["PDF", "Slides"] };
    mock.enqueue({ toolCalls: [{ name: "ask_clarification", args, id: "call_d" }] });
    const first = await stream(thread_id, "deerflow", input("make a report"));
    expect(interrupts(first)).toEqual([]);
    const last = finalMessages(first).at(-1);
    expect(last).toMatchObject({ type: "tool", name: "ask_clarification", tool_call_id: "call_d" });
    expect(last?.content).toBe("❓ Which format?\n\n  1. PDF\n  2. Slides");
    expect((await lg.client.threads.get(thread_id)).status).toBe("idle");

    const second = await stream(thread_id, "deerflow", input("PDF"));
    expect(streamedText(second)).toBe("ok: PDF");
    expect(mock.requests.at(-1)?.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
  });

  it("cancels a run in slow_tool through the abort signal", async () => {
    const { thread_id } = await lg.client.threads.create();
    const before = { ...slowToolStats };
    mock.enqueue({ toolCalls: [{ name: "slow_tool", args: {}, id: "call_s" }] });
    const run = await lg.client.runs.create(thread_id, "agent", input("go slow"));
    while (slowToolStats.started === before.started) await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    await lg.client.runs.cancel(thread_id, run.run_id, true);
    expect(Date.now() - t0).toBeLessThan(SLOW_TOOL_MS);
    expect(slowToolStats.aborted).toBe(before.aborted + 1);
    expect((await lg.client.runs.get(thread_id, run.run_id)).status).toBe("interrupted");
  });

  it("requires the API key", async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${lg.url}/threads/search`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: "{}",
      });
    expect((await post({})).status).toBe(401);
    expect((await post({ "x-api-key": "wrong" })).status).toBe(401);
    // The Studio bypass header is off (disable_studio_auth).
    expect((await post({ "x-auth-scheme": "langsmith" })).status).toBe(401);
    expect((await post({ "x-api-key": lg.apiKey })).status).toBe(200);
    const { Client } = await import("@langchain/langgraph-sdk");
    const wrong = new Client({ apiUrl: lg.url, apiKey: "wrong" });
    await expect(wrong.threads.search()).rejects.toMatchObject({ status: 401 });
  });

  it("counts runs on every thread", async () => {
    const before = await lg.runCount();
    expect(before).toBeGreaterThanOrEqual(8);
    const { thread_id } = await lg.client.threads.create();
    await lg.client.runs.wait(thread_id, "agent", input("one"));
    await lg.client.runs.wait(thread_id, "question", input("two"));
    expect(await lg.runCount()).toBe(before + 2);
  });

  it("closes idempotently and can start again in the same process", async () => {
    const oldUrl = lg.url;
    await Promise.all([lg.close(), lg.close()]);
    await expect(fetch(`${oldUrl}/info`)).rejects.toThrow();
    lg = await startLangGraphServer({ modelUrl: mock.url, apiKey: "second-key" });
    expect(await lg.runCount()).toBe(0);
    const { thread_id } = await lg.client.threads.create();
    const events = await stream(thread_id, "agent", input("again"));
    expect(streamedText(events)).toBe("ok: again");
    expect(await lg.runCount()).toBe(1);
  });
});
