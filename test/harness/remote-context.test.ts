/**
 * The run context of the remote backend, read inside a graph on the real LangGraph API server:
 * the `presenter` graph (test/fakes/langgraph/presenter.ts) appends the context each model turn
 * received to its state's `contexts`. Every kind of server run is covered: a new run, a resume
 * after an interrupt, and the new run a steered message moves the turn to.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { DEERFLOW_RUN_CONTEXT, RemoteAgentConfig } from "../../src/config/remote.js";
import { RemoteHarness } from "../../src/harness/index.js";
import type { RunEvent, RunUser } from "../../src/harness/types.js";
import { MODEL_URL_ENV } from "../fakes/langgraph/graphs.js";
import { lastUserText, type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, last } from "./helpers.js";
import { useLangGraphServer } from "./remote-helpers.js";

const lg = useLangGraphServer();

const ADA: RunUser = { id: "1001", name: "Ada", personId: "default-telegram-1001", channel: "telegram", chatType: "direct" };
const BO: RunUser = { id: "U22", name: "Bo", personId: "default-slack-U22", channel: "slack", chatType: "group" };

let mock: MockModel | undefined;
let harness: RemoteHarness | undefined;
afterEach(async () => {
  await harness?.close();
  await mock?.close();
  harness = undefined;
  mock = undefined;
});

async function start(extra: Record<string, unknown> = {}): Promise<{ harness: RemoteHarness; mock: MockModel }> {
  mock = await startMockModel();
  process.env[MODEL_URL_ENV] = mock.url;
  const s = lg.server();
  const settings = RemoteAgentConfig.parse({ url: s.url, assistant_id: "presenter", api_key: s.apiKey, ...extra });
  harness = new RemoteHarness({ settings });
  return { harness, mock };
}

/** The contexts the graph's model turns received on `thread`, oldest first. */
async function contextsOf(thread: string): Promise<Record<string, unknown>[]> {
  const state = await lg.server().client.threads.getState(thread);
  return (state.values as { contexts?: Record<string, unknown>[] }).contexts ?? [];
}

describe("the run context a remote graph reads", () => {
  it("two chat users get two distinct user_ids, with their own platform id, channel and chat type", async () => {
    const { harness, mock } = await start();
    mock.enqueue({ text: "Hi Ada." }, { text: "Hi Bo." });
    const [t1, t2] = [randomUUID(), randomUUID()];
    expect(last(await collect(harness.run(t1, "hello", { user: ADA })))).toMatchObject({ type: "done", text: "Hi Ada." });
    expect(last(await collect(harness.run(t2, "hello", { user: BO })))).toMatchObject({ type: "done", text: "Hi Bo." });
    const [ada] = await contextsOf(t1);
    const [bo] = await contextsOf(t2);
    expect(ada).toEqual({
      ...DEERFLOW_RUN_CONTEXT,
      user_id: "default-telegram-1001",
      channel_user_id: "1001",
      channel_name: "telegram",
      chat_type: "direct",
      thread_id: t1,
    });
    expect(bo).toEqual({
      ...DEERFLOW_RUN_CONTEXT,
      user_id: "default-slack-U22",
      channel_user_id: "U22",
      channel_name: "slack",
      chat_type: "group",
      thread_id: t2,
    });
    // The server thread names the person, and the platform id beside it.
    const meta = (await lg.server().client.threads.get(t1)).metadata;
    expect(meta).toMatchObject({ user_id: "default-telegram-1001", channel_user_id: "1001", user_name: "Ada" });
  });

  it("the configured switches arrive, and a configured user_id cannot speak for the chat user", async () => {
    const { harness, mock } = await start({
      context: { thinking_enabled: false, is_plan_mode: true, agent_name: "researcher", user_id: "admin", thread_id: "x" },
    });
    mock.enqueue({ text: "Planned." });
    const thread = randomUUID();
    await collect(harness.run(thread, "plan my week", { user: ADA }));
    expect(await contextsOf(thread)).toEqual([
      {
        thinking_enabled: false,
        is_plan_mode: true,
        agent_name: "researcher",
        user_id: "default-telegram-1001",
        channel_user_id: "1001",
        channel_name: "telegram",
        chat_type: "direct",
        thread_id: thread,
      },
    ]);
  });

  it("a run without a user still carries its thread and switches; `context: false` sends nothing", async () => {
    const first = await start();
    first.mock.enqueue({ text: "Scheduled." });
    const thread = randomUUID();
    await collect(first.harness.run(thread, "daily digest"));
    expect(await contextsOf(thread)).toEqual([{ ...DEERFLOW_RUN_CONTEXT, thread_id: thread }]);
    await first.harness.close();
    await first.mock.close();

    const off = await start({ context: false });
    off.mock.enqueue({ text: "Plain." });
    const other = randomUUID();
    await collect(off.harness.run(other, "hi", { user: ADA }));
    expect(await contextsOf(other)).toEqual([{}]);
  });

  it("a resume after an interrupt carries the context too", async () => {
    const { harness, mock } = await start();
    mock.enqueue({ toolCalls: [{ name: "ask_clarification", args: { question: "Which city?" } }] }, { text: "Lisbon it is." });
    const thread = randomUUID();
    const asked = await collect(harness.run(thread, "book a trip", { user: ADA }));
    expect(last(asked)).toMatchObject({ type: "clarification", question: "Which city?" });
    const done = await collect(harness.resume(thread, "Lisbon", { user: ADA }));
    expect(last(done)).toMatchObject({ type: "done", text: "Lisbon it is." });
    const contexts = await contextsOf(thread);
    expect(contexts).toHaveLength(2);
    for (const c of contexts) expect(c).toMatchObject({ user_id: "default-telegram-1001", thread_id: thread });
    const runs = await lg.server().client.runs.list(thread);
    expect(runs).toHaveLength(2);
  });

  it("the new run a steered message moves the turn to carries the context too", async () => {
    const { harness, mock } = await start();
    const answer = "Staging is fine too.";
    mock.setDefault((req) => (lastUserText(req) === "and staging" ? { text: answer } : { text: "cut", firstByteMs: 1500 }));
    mock.enqueue({ toolCalls: [{ name: "wait", args: { ms: 600 } }] });
    const thread = randomUUID();
    let steered: Promise<string> | undefined;
    const events: RunEvent[] = [];
    for await (const e of harness.run(thread, "deploy", { user: BO, tag: "test:steer", steerable: true })) {
      events.push(e);
      if (e.type === "tool_start") steered = harness.steer(thread, "and staging");
    }
    expect(await steered).toBe("taken");
    expect(last(events)).toMatchObject({ type: "done", text: answer });
    expect(await lg.server().client.runs.list(thread)).toHaveLength(2);
    const contexts = await contextsOf(thread);
    // The first run's model turn, and the steered run's (the cut call wrote nothing).
    expect(contexts).toHaveLength(2);
    for (const c of contexts)
      expect(c).toMatchObject({ user_id: "default-slack-U22", channel_user_id: "U22", thread_id: thread });
  });
});
