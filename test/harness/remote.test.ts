/**
 * The `remote` backend beyond the contract, against a real LangGraph API server in this process:
 * interrupts that are not questions, DeerFlow-style questions that end the run, what reaches the
 * chat, thread metadata, reattaching after a restart, and a clear word on each failure.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { RemoteAgentConfig } from "../../src/config/schema.js";
import { RemoteHarness } from "../../src/harness/index.js";
import { MESSAGES } from "../../src/harness/run-errors.js";
import type { RunEvent } from "../../src/harness/types.js";
import type { ModelUsage } from "../../src/harness/usage.js";
import { freePort } from "../contract/gateway.js";
import { collect, deltas, last } from "./helpers.js";
import { type RemoteSubject, useLangGraphServer } from "./remote-helpers.js";

const lg = useLangGraphServer();
let s: RemoteSubject | undefined;

afterEach(async () => {
  await s?.close();
  s = undefined;
});

function history(subject: RemoteSubject): string[] | undefined {
  return subject.mock.requests
    .at(-1)
    ?.messages.filter((m) => m.role !== "system")
    .map((m) => `${m.role}:${m.tool_call_id ?? m.content}`);
}

describe("what a remote run shows", () => {
  it("an interrupt that is not a question is asked as text, and the answer resumes it", async () => {
    s = await lg.subject("question");
    const thread = randomUUID();
    const first = await collect(s.harness.run(thread, "ship it"));
    expect(last(first)).toMatchObject({ type: "clarification", question: "Publish the draft to the blog?", options: [] });
    expect((await s.harness.getThread(thread))?.pending?.question).toBe("Publish the draft to the blog?");
    const second = await collect(s.harness.resume(thread, "yes, today"));
    expect(last(second)).toMatchObject({ type: "done", text: "Published (answer: yes, today)." });
  });

  it("a DeerFlow-style question (the run ends on an ask_clarification result) gets buttons; the answer is the next message", async () => {
    s = await lg.subject("deerflow");
    const thread = randomUUID();
    const args = {
      question: "Which format?",
      clarification_type: "approach_choice",
      context: "Both work.",
      options: ["PDF", "Slides"],
    };
    s.mock.enqueue({ toolCalls: [{ name: "ask_clarification", id: "call_df", args }] });
    const first = await collect(s.harness.run(thread, "make a report"));
    expect(last(first)).toMatchObject({
      type: "clarification",
      interruptId: "",
      question: "Which format?",
      options: ["PDF", "Slides"],
      kind: "approach_choice",
      context: "Both work.",
    });
    expect((await s.harness.getThread(thread))?.pending).toMatchObject({ question: "Which format?", options: ["PDF", "Slides"] });
    s.mock.enqueue({ text: "A PDF it is." });
    const second = await collect(s.harness.resume(thread, "PDF"));
    expect(last(second)).toMatchObject({ type: "done", text: "A PDF it is." });
    expect(history(s)?.slice(-4)).toEqual(["user:make a report", "assistant:", "tool:call_df", "user:PDF"]);
    // Answered: nothing is open any more.
    expect(await collect(s.harness.resume(thread, "again"))).toEqual([
      { type: "error", code: "no_pending", message: expect.any(String) },
    ]);
  });

  it("a model called inside a tool does not stream into the reply; tool events do", async () => {
    s = await lg.subject();
    const thread = randomUUID();
    s.mock.enqueue(
      { text: "Let me ask.", toolCalls: [{ name: "ask_expert", id: "call_x", args: { topic: "antlers" } }] },
      { text: "EXPERT-ONLY TEXT about antlers", chunkSize: 4 },
      { text: "Antlers regrow every year." },
    );
    const events = await collect(s.harness.run(thread, "tell me about antlers"));
    expect(deltas(events).join("")).toBe("Let me ask.\n\nAntlers regrow every year.");
    expect(events.filter((e) => e.type === "tool_start" || e.type === "tool_end").map((e) => e.type)).toEqual([
      "tool_start",
      "tool_end",
    ]);
    expect(events.find((e) => e.type === "tool_end")).toMatchObject({
      name: "ask_expert",
      output: "EXPERT-ONLY TEXT about antlers",
    });
    expect(last(events)).toMatchObject({ type: "done", text: "Let me ask.\n\nAntlers regrow every year." });
  });

  it("creates the server thread with the conversation's labels, once", async () => {
    s = await lg.subject();
    const thread = randomUUID();
    const origin = { channel: "slack", conversation: "slack:T1:C1:1700.1", chat: "C1" };
    await collect(s.harness.run(thread, "one", { origin, user: { id: "U7", name: "Ada" } }));
    await collect(s.harness.run(thread, "two", { origin }));
    const server = await lg.server().client.threads.get(thread);
    expect(server.metadata).toMatchObject({ ...origin, user_id: "U7", user_name: "Ada", source: "antler" });
    expect((await lg.server().client.runs.list(thread)).length).toBe(2);
  });
});

describe("usage", () => {
  it("the usage the server's AI messages carry is reported as chat under the assistant id, each call once", async () => {
    s = await lg.subject();
    const reported: ModelUsage[] = [];
    const harness = new RemoteHarness({ settings: settingsOf(s), onUsage: (u) => reported.push(u) });
    const first = { prompt_tokens: 21, completion_tokens: 6, total_tokens: 27 };
    const second = { prompt_tokens: 34, completion_tokens: 5, total_tokens: 39 };
    s.mock.enqueue(
      { toolCalls: [{ name: "lookup_weather", id: "call_u", args: { city: "Oslo" } }], usage: first },
      { text: "Sunny in Oslo.", usage: second },
    );
    const events = await collect(harness.run(randomUUID(), "weather?"));
    expect(last(events)).toMatchObject({ type: "done", text: "Sunny in Oslo." });
    const chat = (u: typeof first): ModelUsage => ({
      kind: "chat",
      model: "agent",
      inputTokens: u.prompt_tokens,
      outputTokens: u.completion_tokens,
      totalTokens: u.total_tokens,
    });
    expect(reported).toEqual([chat(first), chat(second)]);
  });
});

describe("reattach after a restart", () => {
  it("a run still going is joined and its whole answer arrives; an unknown tag finds nothing", async () => {
    s = await lg.subject();
    const thread = randomUUID();
    const story = "A long answer that keeps going while the gateway restarts, and ends exactly here.";
    s.mock.enqueue({ text: story, chunkSize: 4, delayMs: 40 });
    await goAwayMidRun(s, thread, "tell me", "telegram:42");
    const next = new RemoteHarness({ settings: settingsOf(s), logger: undefined });
    expect(await next.reattach(thread, "telegram:99")).toBeUndefined();
    const joined = await next.reattach(thread, "telegram:42");
    const events = await collect(joined as AsyncIterable<RunEvent>);
    expect(last(events)).toMatchObject({ type: "done", text: story });
    expect(deltas(events).join("")).toBe(story);
    expect((await lg.server().client.runs.list(thread)).length).toBe(1);
    expect(s.mock.requests).toHaveLength(1);
  });

  it("a run that ended while the gateway was down is answered from the thread", async () => {
    s = await lg.subject();
    const thread = randomUUID();
    s.mock.enqueue({ text: "Finished while nobody listened.", chunkSize: 5, delayMs: 20 });
    await goAwayMidRun(s, thread, "go", "slack:Ev1");
    const client = lg.server().client;
    for (;;) {
      const runs = await client.runs.list(thread);
      if (runs.every((r) => r.status !== "pending" && r.status !== "running")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const next = new RemoteHarness({ settings: settingsOf(s) });
    const events = await collect((await next.reattach(thread, "slack:Ev1")) as AsyncIterable<RunEvent>);
    expect(last(events)).toMatchObject({ type: "done", text: "Finished while nobody listened." });
  });
});

/** The first gateway reads a little of a run, then closes (as at a shutdown: the server run goes on). */
async function goAwayMidRun(subject: RemoteSubject, thread: string, text: string, tag: string): Promise<void> {
  const events: RunEvent[] = [];
  for await (const e of subject.harness.run(thread, text, { tag })) {
    events.push(e);
    if (e.type === "text" && events.length === 1) await subject.harness.close();
  }
  expect(last(events)).toMatchObject({ type: "error" });
}

function settingsOf(subject: RemoteSubject) {
  const server = lg.server();
  void subject;
  return RemoteAgentConfig.parse({ url: server.url, assistant_id: "agent", api_key: server.apiKey });
}

describe("failures", () => {
  const cases: Array<[string, () => Promise<Record<string, unknown>>, string, RegExp, boolean]> = [
    [
      "an unreachable server",
      async () => ({ url: `http://127.0.0.1:${await freePort()}` }),
      MESSAGES.agentUnreachable,
      /not reachable/,
      false,
    ],
    [
      "a wrong API key",
      async () => ({ api_key: "wrong-key" }),
      MESSAGES.agentAuth,
      /rejected the API key \(HTTP 40[13]\).*api_key/,
      true,
    ],
    [
      "an unknown assistant",
      async () => ({ assistant_id: "no_such_graph" }),
      MESSAGES.agentUnknown,
      /no_such_graph.*assistant_id/,
      true,
    ],
  ];
  for (const [name, settings, message, detail, reachable] of cases) {
    it(`${name}: a clear notice in the chat, and the status names it`, async () => {
      const extra = await settings();
      s = await lg.subject((extra.assistant_id as string | undefined) ?? "agent", extra);
      const end = last(await collect(s.harness.run(randomUUID(), "hello")));
      expect(end).toEqual({ type: "error", code: "agent_error", message });
      const status = await s.harness.status();
      expect(status.backend).toBe("remote");
      expect(status.reachable).toBe(reachable);
      expect(status.last_error?.message).toMatch(detail);
      await expect(s.harness.check()).rejects.toThrow(detail);
    });
  }

  it("a run that fails on the server: a notice, and the thread goes on", async () => {
    s = await lg.subject();
    const thread = randomUUID();
    s.mock.enqueue({ fault: "http500" });
    const end = last(await collect(s.harness.run(thread, "hello")));
    expect(end).toEqual({ type: "error", code: "agent_error", message: MESSAGES.agentFailed });
    expect((await s.harness.status()).last_error?.message).toMatch(/a run failed on the server/);
    expect(last(await collect(s.harness.run(thread, "again")))).toMatchObject({ type: "done", text: "ok: again" });
  });

  it("check() says what it found on a healthy server", async () => {
    s = await lg.subject();
    await expect(s.harness.check()).resolves.toMatch(/is reachable; assistant agent runs graph agent/);
    expect(await s.harness.status(true)).toMatchObject({ backend: "remote", reachable: true, last_error: null });
  });
});
