/**
 * Slack end to end through a real gateway (dispatcher, renderer, SQLite, embedded agent with the
 * mock model): the acceptance scenarios beyond the shared contract.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eventually, freePort, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { type ChatCompletionRequest, contentText } from "../fakes/openai.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { slackConfigFor } from "../fakes/slack/rig.js";

let fake: FakeSlack | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await fake?.close();
  gw = undefined;
  fake = undefined;
});

async function boot(
  mode: "socket" | "webhook",
  extra: Record<string, unknown> = {},
): Promise<{ fake: FakeSlack; gw: TestGateway }> {
  fake = await FakeSlack.start({ mode });
  const port = await freePort();
  fake.eventsUrl = `http://127.0.0.1:${port}/slack/events`;
  const slack = { enabled: true, ...slackConfigFor(fake, { edit_interval_ms: 200, ...extra }) };
  gw = await startTestGateway({ channels: { slack }, port });
  expect(gw.gateway.slot("slack")?.report().state).toBe("running");
  return { fake, gw };
}

/** Texts of every user message the model saw in its newest request. */
function userTurns(g: TestGateway): string[] {
  const last = g.model.requests.at(-1);
  return last ? userTurnsOf(last) : [];
}

const REPLY = "First part of a streamed answer. Second part arrives later. Third part ends it.";

describe("slack end to end", () => {
  it("answers a mention with a threaded, natively streamed reply; a thread follow-up continues it", async () => {
    const { fake, gw } = await boot("socket");
    // A model slow to start: the thread shows "is thinking…" while waiting for its first words.
    gw.model.enqueue({ text: REPLY, chunkSize: 8, delayMs: 25, firstByteMs: 900 });
    const root = await fake.mention("first question");
    const reply = await eventually(() => fake.botMessages("C0001", root).find((m) => m.text === REPLY), 15_000, "the reply");
    expect(reply.threadId).toBe(root);
    expect(reply.versions.length).toBeGreaterThanOrEqual(2);
    expect(fake.calls("chat.startStream").at(-1)).toMatchObject({ channel: "C0001", thread_ts: root });
    expect(fake.api.statuses.some((s) => s.threadTs === root && s.status !== "")).toBe(true);

    gw.model.enqueue({ text: "Follow-up answer." });
    await fake.say("and a follow-up", { threadTs: root });
    await eventually(
      () => fake.botMessages("C0001", root).find((m) => m.text === "Follow-up answer."),
      15_000,
      "follow-up reply",
    );
    expect(userTurns(gw)).toEqual(["first question", "and a follow-up"]);
  });

  it("after a restart, a thread follow-up without a mention still continues the conversation", async () => {
    const { fake, gw: first } = await boot("socket");
    first.model.enqueue({ text: "Before the restart." });
    const root = await fake.mention("remember the otter");
    await eventually(() => fake.botMessages("C0001", root).find((m) => m.text === "Before the restart."), 15_000);
    await first.stop(false);
    gw = await startTestGateway({
      channels: { slack: { enabled: true, ...slackConfigFor(fake, { edit_interval_ms: 200 }) } },
      model: first.model,
      dir: first.dir,
    });
    gw.model.enqueue({ text: "After the restart." });
    await fake.say("what did I ask you to remember?", { threadTs: root });
    await eventually(
      () => fake.botMessages("C0001", root).find((m) => m.text === "After the restart."),
      15_000,
      "the follow-up reply",
    );
    expect(userTurns(gw)).toEqual(["remember the otter", "what did I ask you to remember?"]);
    // A thread the bot was never part of stays quiet.
    const other = await fake.say("unrelated chatter");
    await fake.say("a reply in someone else's thread", { threadTs: other });
    await sleep(300);
    expect(gw.model.requests.map((r) => userTurnsOf(r).at(-1))).not.toContain("a reply in someone else's thread");
  });

  it("continues the DM's thread with a second DM", async () => {
    const { fake, gw } = await boot("socket");
    gw.model.enqueue({ text: "Hi there." }, { text: "Still here." });
    await fake.dm("hello");
    await eventually(() => fake.botMessages("D0001").find((m) => m.text === "Hi there."), 15_000, "first DM reply");
    await fake.dm("are you there?");
    await eventually(() => fake.botMessages("D0001").find((m) => m.text === "Still here."), 15_000, "second DM reply");
    expect(userTurns(gw)).toEqual(["hello", "are you there?"]);
    expect(fake.botMessages("D0001").every((m) => m.threadId === undefined)).toBe(true);
  });

  it("http mode: a retried delivery (X-Slack-Retry-Num) gives one run", async () => {
    const { fake, gw } = await boot("webhook");
    gw.model.enqueue({ text: "Once." });
    await fake.dm("only once please");
    const retry = await fake.redeliverLast();
    expect(retry.status).toBe(200);
    await eventually(() => fake.botMessages("D0001").find((m) => m.text === "Once."), 15_000, "the reply");
    await fake.redeliverLast();
    await sleep(300);
    expect(gw.model.requests.filter((r) => userTurnsOf(r).at(-1) === "only once please")).toHaveLength(1);
  });

  it("resumes a question in a channel thread by button, then another by a text reply", async () => {
    const { fake, gw } = await boot("webhook");
    const ask = (question: string) => ({
      toolCalls: [{ name: "ask_clarification", args: { question, options: ["Red", "Blue"] } }],
    });
    gw.model.enqueue(ask("Which colour?"), { text: "Blue it is." });
    const root = await fake.mention("pick a colour");
    await eventually(() => fake.botMessages("C0001", root).find((m) => m.buttons.includes("Blue")), 15_000, "the question");
    await fake.click("Blue");
    await eventually(() => fake.botMessages("C0001", root).find((m) => m.text === "Blue it is."), 15_000, "reply after click");

    gw.model.enqueue(ask("Which shade?"), { text: "Dark red, then." });
    await fake.say("one more choice", { threadTs: root });
    await eventually(
      () => fake.botMessages("C0001", root).find((m) => m.text.includes("Which shade?")),
      15_000,
      "second question",
    );
    await fake.say("dark red", { threadTs: root });
    await eventually(() => fake.botMessages("C0001", root).find((m) => m.text === "Dark red, then."), 15_000, "reply after text");
    const tools = gw.model.requests
      .at(-1)
      ?.messages.filter((m) => m.role === "tool")
      .map((m) => contentText(m.content));
    expect(tools?.slice(-2)).toEqual(["Blue", "dark red"]);
  });

  it("falls back to chat.update when the native stream fails mid-way, with the exact final text", async () => {
    const { fake, gw } = await boot("socket");
    gw.model.enqueue({ text: REPLY, chunkSize: 5, delayMs: 40 });
    const root = await fake.mention("stream please");
    await eventually(() => fake.calls("chat.appendStream").length >= 1, 15_000, "the first append");
    fake.api.failNext("chat.appendStream", "streaming_state_conflict");
    const reply = await eventually(() => fake.botMessages("C0001", root).find((m) => m.text === REPLY), 15_000, "exact reply");
    expect(fake.calls("chat.update").length).toBeGreaterThanOrEqual(1);
    expect(reply.streaming).toBe(false);
  });
});

function userTurnsOf(r: ChatCompletionRequest): string[] {
  return r.messages.filter((m) => m.role === "user").map((m) => contentText(m.content));
}
