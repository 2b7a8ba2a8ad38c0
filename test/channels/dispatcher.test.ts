/**
 * The shared core end to end, on the loopback platform: dedupe (also across a restart),
 * ordering, parallelism, commands, and questions that outlive a restart.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/types.js";
import { NOTICES } from "../../src/core/dispatcher.js";
import { PlatformAuthError } from "../../src/errors.js";
import { MESSAGES } from "../../src/harness/run-errors.js";
import type { Harness, RunEvent } from "../../src/harness/types.js";
import { SqliteBindingStore } from "../../src/storage/sqlite/index.js";
import type { SupervisorOptions } from "../../src/supervisor.js";
import { eventually, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { type ChatCompletionRequest, contentText, lastUserText, type MockModel, startMockModel } from "../fakes/openai.js";

let running: TestGateway[] = [];
let models: MockModel[] = [];

afterEach(async () => {
  for (const gw of running) await gw.stop(false).catch(() => undefined);
  for (const m of models) await m.close();
  running = [];
  models = [];
});

async function boot(
  world: LoopbackWorld,
  extra: {
    model?: MockModel;
    dir?: string;
    gateway?: Record<string, unknown>;
    supervisor?: SupervisorOptions;
    drainMs?: number;
  } = {},
) {
  const model = extra.model ?? (await startMockModel());
  if (!extra.model) models.push(model);
  const gw = await startTestGateway({ channels: { loop: world.channelConfig() }, model, ...extra });
  running.push(gw);
  return gw;
}

const texts = (world: LoopbackWorld, chatId = "dm1") => world.botMessages(chatId).map((m) => m.text);
const userTexts = (model: MockModel) =>
  model.requests.map((r) => contentText(r.messages.filter((m) => m.role === "user").at(-1)?.content));

/** A model that answers "reply to <the user's text>", streamed in chunks of `chunkSize` `delayMs` apart. */
const echoing = (chunkSize: number, delayMs: number) => (req: ChatCompletionRequest) => ({
  text: `reply to ${contentText(req.messages.at(-1)?.content)}`,
  chunkSize,
  delayMs,
});

/** Starts a slow reply in conversation dm2, so (with one run slot) the next message waits. */
async function keepOneSlotBusy(world: LoopbackWorld, gw: TestGateway, delayMs: number): Promise<void> {
  gw.model.setDefault(echoing(2, delayMs));
  await world.userSays("busy elsewhere", { chatId: "dm2" });
  await eventually(() => world.botMessages("dm2").length > 0);
}

describe("dispatcher", () => {
  it("runs an event delivered three times exactly once, also across a restart", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world);
    gw.model.enqueue({ text: "first and only" });
    const msg = await world.userSays("say it once", { eventId: "same-1" });
    await world.deliver(msg);
    await eventually(() => texts(world).includes("first and only"));
    await world.deliver(msg);
    await gw.stop(false);
    await boot(world, { model: gw.model, dir: gw.dir });
    await world.deliver(msg);
    await sleep(300);
    expect(gw.model.requests).toHaveLength(1);
    expect(texts(world)).toEqual(["first and only"]);
  });

  it("answers two messages of one conversation in order, never at once; other conversations run in parallel", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world);
    gw.model.setDefault(echoing(4, 30));
    await world.userSays("one");
    await world.userSays("two");
    await world.userSays("three", { chatId: "dm2" });
    await eventually(() => texts(world).includes("reply to two") && texts(world, "dm2").includes("reply to three"), 15_000);
    expect(texts(world)).toEqual(["reply to one", "reply to two"]);
    const [one, two] = world.botMessages();
    // "two" starts only after "one" has its final text.
    expect(two!.versions[0]!.at).toBeGreaterThanOrEqual(one!.versions.at(-1)!.at);
    // The model saw "two" after "one" with "one" in its history.
    const second = gw.model.requests.find((r) => contentText(r.messages.at(-1)?.content) === "two");
    expect(second?.messages.map((m) => contentText(m.content))).toContain("reply to one");
    // dm2 overlapped with dm1's replies instead of waiting for both.
    const three = world.botMessages("dm2")[0]!;
    expect(three.versions[0]!.at).toBeLessThan(two!.versions.at(-1)!.at);
  });

  it("tells the user when the conversation queue is full, and answers the rest", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world, { gateway: { queue_size: 1 } });
    gw.model.setDefault({ text: "slow reply", chunkSize: 2, delayMs: 40 });
    await world.userSays("a");
    await eventually(() => world.typing.length > 0 || world.botMessages().length > 0);
    await world.userSays("b");
    await world.userSays("c");
    await eventually(() => texts(world).filter((t) => t === "slow reply").length === 2, 15_000);
    expect(texts(world)).toContain(NOTICES.busy);
    expect(userTexts(gw.model)).toEqual(["a", "b"]);
  });

  it("keeps a pending question across a restart; a click answers it afterwards", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world);
    gw.model.enqueue({
      toolCalls: [{ name: "ask_clarification", args: { question: "Tea or coffee?", options: ["Tea", "Coffee"] } }],
    });
    await world.userSays("what should I drink");
    await eventually(() => world.botMessages().find((m) => m.buttons.length === 2));
    await gw.stop(false);
    const again = await boot(world, { model: gw.model, dir: gw.dir });
    again.model.enqueue({ text: "Coffee, then." });
    await world.click("Coffee");
    await eventually(() => texts(world).includes("Coffee, then."), 15_000);
    const tool = again.model.requests.at(-1)?.messages.find((m) => m.role === "tool");
    expect(contentText(tool?.content)).toBe("Coffee");
    const question = world.botMessages().find((m) => m.text.includes("Tea or coffee?"))!;
    expect(question.buttons).toEqual([]);
  });

  it("keeps a pending question across a restart; an option number answers it afterwards", async () => {
    const world = new LoopbackWorld({ buttons: false });
    const gw = await boot(world);
    gw.model.enqueue({
      toolCalls: [{ name: "ask_clarification", args: { question: "Which size?", options: ["Small", "Large"] } }],
    });
    await world.userSays("order a pizza");
    await eventually(() => texts(world).some((t) => t.includes("Which size?")));
    await gw.stop(false);
    const again = await boot(world, { model: gw.model, dir: gw.dir });
    again.model.enqueue({ text: "Large it is." });
    await world.userSays("2");
    await eventually(() => texts(world).includes("Large it is."), 15_000);
    expect(contentText(again.model.requests.at(-1)?.messages.find((m) => m.role === "tool")?.content)).toBe("Large");
  });

  it("/new starts a fresh thread; /status describes it; /help lists commands", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world);
    gw.model.enqueue({ text: "remembered" });
    await world.userSays("remember the word heron");
    await eventually(() => texts(world).includes("remembered"));
    await world.userSays("/status");
    const status = await eventually(() => texts(world).find((t) => t.startsWith("Thread: ")));
    expect(status).toMatch(/Model: mock/);
    expect(status).toMatch(/Replying now: no/);
    const firstThread = /Thread: (\S+)/.exec(status)![1];
    await world.userSays("/new");
    await eventually(() => texts(world).includes(NOTICES.newThread));
    gw.model.enqueue({ text: "fresh" });
    await world.userSays("what word?");
    await eventually(() => texts(world).includes("fresh"));
    const last = gw.model.requests.at(-1)!;
    expect(last.messages.map((m) => contentText(m.content)).join(" ")).not.toContain("heron");
    await world.userSays("/status");
    await eventually(() => texts(world).filter((t) => t.startsWith("Thread: ")).length === 2);
    const second = texts(world).filter((t) => t.startsWith("Thread: "))[1]!;
    expect(second).not.toContain(firstThread!);
    await world.userSays("/help");
    await eventually(() => texts(world).some((t) => t.includes("/stop")));
  });

  it("/stop cancels the running reply and says so; the thread keeps working", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world);
    gw.model.enqueue({ text: "a".repeat(400), chunkSize: 2, delayMs: 20 });
    await world.userSays("write a long answer");
    await eventually(() => world.botMessages().length > 0);
    await world.userSays("/status");
    await eventually(() => texts(world).some((t) => t.includes("Replying now: yes")));
    await world.userSays("/stop");
    await eventually(() => texts(world).some((t) => /stop/i.test(t) && !t.startsWith("Thread")), 5_000, "a stop notice");
    expect(texts(world)).not.toContain("a".repeat(400));
    gw.model.enqueue({ text: "still here" });
    await world.userSays("are you there?");
    await eventually(() => texts(world).includes("still here"));
    await world.userSays("/stop");
    await eventually(() => texts(world).includes(NOTICES.nothingToStop));
  });

  it("stops a run that takes longer than run_timeout_ms and says why", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world, { gateway: { run_timeout_ms: 400 } });
    gw.model.enqueue({ text: "b".repeat(300), chunkSize: 1, delayMs: 20 });
    await world.userSays("take your time");
    const notice = await eventually(() => texts(world).find((t) => t.startsWith("⚠️")), 10_000, "the timeout notice");
    expect(notice).toContain("took too long");
    gw.model.enqueue({ text: "quick now" });
    await world.userSays("again, quickly");
    await eventually(() => texts(world).includes("quick now"), 10_000);
  });

  it("gives up on a platform call that never answers, and the reply still arrives", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world, { gateway: { platform_call_timeout_ms: 300 } });
    world.hangNext("send");
    gw.model.enqueue({ text: "through a hung platform" });
    await world.userSays("hello?");
    await eventually(() => texts(world).includes("through a hung platform"), 10_000);
    expect(world.calls.some((c) => c.detail === "hung")).toBe(true);
  });

  it("ignores group messages without a mention, and users outside the allowlist", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world);
    await world.userSays("chatter", { chatType: "group", chatId: "g1", mentioned: false });
    gw.model.enqueue({ text: "hello group" });
    await world.userSays("bot, hi", { chatType: "group", chatId: "g1", mentioned: true });
    await eventually(() => texts(world, "g1").includes("hello group"));
    expect(userTexts(gw.model)).toEqual(["bot, hi"]);
  });

  it("refuses (does not ack) messages once shutdown began, so the platform redelivers them", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world);
    gw.gateway.messageDispatcher!.stopAccepting();
    await expect(world.userSays("too late", { eventId: "late-1" })).rejects.toThrow(/shutting down/);
    expect(await gw.gateway.bindingStore!.getInbound("loop", "late-1")).toBeUndefined();
  });

  it("answers a message without text with a clear notice and no run", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world);
    await world.userSays("");
    await eventually(() => texts(world).includes(NOTICES.nonText));
    expect(gw.model.requests).toHaveLength(0);
  });

  it("turns a model failure into a short notice and keeps the thread usable", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world);
    gw.model.enqueue({ fault: "http500" });
    await world.userSays("break please");
    await eventually(() => texts(world).some((t) => t.startsWith("⚠️")), 15_000);
    gw.model.enqueue({ text: "recovered" });
    await world.userSays("again");
    await eventually(() => texts(world).includes("recovered"), 15_000);
  });

  it("tells the user about a message a crash left unfinished also when the channel only comes up on a later restart", async () => {
    const world = new LoopbackWorld();
    const first = await boot(world);
    const dir = first.dir;
    await first.stop(false);
    // What a crashed process leaves behind: a recorded message that never got its answer.
    const store = new SqliteBindingStore(`${dir}/antler.db`);
    const lost: InboundMessage = {
      channel: "loop",
      eventId: "lost-1",
      ref: { channel: "loop", key: "loop:w:dm1", chatId: "dm1", chatType: "direct" },
      user: { id: "u1" },
      text: "are you there?",
      mentioned: true,
      sentAt: Date.now(),
    };
    await store.recordInbound({ channel: "loop", eventId: "lost-1", key: lost.ref.key, payload: lost as never });
    await store.setInboxState("loop", "lost-1", "running");
    await store.close();

    world.startError = () => new PlatformAuthError("loop", "401 Unauthorized");
    const gw = await boot(world, { model: first.model, dir, supervisor: { baseDelayMs: 50, pollMs: 20 } });
    expect(gw.gateway.report("loop")?.state).toBe("failed");
    world.startError = undefined;
    await eventually(() => gw.gateway.report("loop")?.state === "running", 10_000, "the supervisor to restart the channel");
    await eventually(() => texts(world).includes(NOTICES.restarted), 5_000, "the restart notice");
    expect((await gw.gateway.bindingStore!.getInbound("loop", "lost-1"))?.state).toBe("failed");
  });

  it("ends a run whose backend ignores the timeout: the user is told, and the conversation and run slot are freed", async () => {
    // A backend that hangs and never honours its abort signal (a stuck remote server, a model
    // call without a timeout). The gateway must still give the user an answer and move on.
    const runs: string[] = [];
    const harness: Harness = {
      run(_threadId, text) {
        runs.push(text);
        return (async function* (): AsyncGenerator<RunEvent> {
          if (text === "hang") await new Promise(() => undefined);
          yield { type: "text", delta: `echo ${text}` };
          yield { type: "done", text: `echo ${text}` };
        })();
      },
      resume: () => (async function* (): AsyncGenerator<RunEvent> {})(),
      cancel: () => false,
      getThread: async () => undefined,
      close: async () => undefined,
    };
    const world = new LoopbackWorld();
    const gw = await startTestGateway({
      channels: { loop: world.channelConfig() },
      harness,
      gateway: { run_timeout_ms: 300, max_concurrent_runs: 1 },
    });
    running.push(gw);
    models.push(gw.model);
    await world.userSays("hang");
    await world.userSays("after");
    await world.userSays("elsewhere", { chatId: "dm2" });
    const notice = await eventually(() => texts(world).find((t) => t.startsWith("⚠️")), 10_000, "the timeout notice");
    expect(notice).toMatch(/too long/);
    await eventually(() => texts(world).includes("echo after") && texts(world, "dm2").includes("echo elsewhere"), 10_000);
    expect(gw.gateway.messageDispatcher!.activeRuns).toBe(0);
  });

  it("tells the user when a run ends without any text (only tool calls), instead of leaving silence", async () => {
    const harness: Harness = {
      run: () =>
        (async function* (): AsyncGenerator<RunEvent> {
          yield { type: "tool_start", id: "t1", name: "web_search", args: {} };
          yield { type: "tool_end", id: "t1", name: "web_search", output: "3 results", error: false };
          yield { type: "done", text: "" };
        })(),
      resume: () => (async function* (): AsyncGenerator<RunEvent> {})(),
      cancel: () => false,
      getThread: async () => undefined,
      close: async () => undefined,
    };
    const world = new LoopbackWorld();
    const gw = await startTestGateway({ channels: { loop: world.channelConfig() }, harness });
    running.push(gw);
    models.push(gw.model);
    const msg = await world.userSays("search quietly");
    await eventually(async () => (await gw.gateway.bindingStore!.getInbound("loop", msg.eventId))?.state === "done");
    expect(texts(world)).toEqual([NOTICES.noReply]);
  });

  it("on shutdown, the cut-off reply says the gateway restarts; queued messages wait in the inbox and run after the restart", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world, { drainMs: 200 });
    gw.model.setDefault({ text: "c".repeat(400), chunkSize: 2, delayMs: 20 });
    const first = await world.userSays("one");
    await eventually(() => world.botMessages().length > 0);
    const queued = [await world.userSays("two"), await world.userSays("three")];
    await gw.stop(false);
    expect(userTexts(gw.model)).toEqual(["one"]);
    expect(texts(world).some((t) => t.includes(MESSAGES.shutdown))).toBe(true);
    expect(texts(world).some((t) => t.includes(MESSAGES.cancelled))).toBe(false);
    const store = new SqliteBindingStore(`${gw.dir}/antler.db`);
    try {
      expect((await store.getInbound("loop", first.eventId))?.state).toBe("done");
      expect((await store.unfinished()).map((e) => [e.eventId, e.state])).toEqual(queued.map((m) => [m.eventId, "received"]));
    } finally {
      await store.close();
    }

    gw.model.setDefault((req) => ({ text: `answer to ${lastUserText(req)}` }));
    const again = await boot(world, { model: gw.model, dir: gw.dir });
    await eventually(() => texts(world).includes("answer to three"), 10_000, "the queued messages answered after the restart");
    expect(userTexts(gw.model)).toEqual(["one", "two", "three"]);
    expect(texts(world).indexOf("answer to two")).toBeLessThan(texts(world).indexOf("answer to three"));
    await eventually(async () => (await again.gateway.bindingStore!.unfinished()).length === 0, 10_000, "the inbox done");
  });

  it("after a crash, a message accepted but never started runs if young enough; an older one gets a notice", async () => {
    const world = new LoopbackWorld();
    const first = await boot(world);
    const dir = first.dir;
    await first.stop(false);
    const store = new SqliteBindingStore(`${dir}/antler.db`);
    const waiting = (eventId: string, text: string, chatId: string): InboundMessage => ({
      channel: "loop",
      eventId,
      ref: { channel: "loop", key: `loop:w:${chatId}`, chatId, chatType: "direct" },
      user: { id: "u1" },
      text,
      mentioned: true,
      sentAt: Date.now(),
    });
    for (const msg of [waiting("old-1", "a while ago", "dm1"), waiting("old-2", "long ago", "dm2")]) {
      await store.recordInbound({ channel: "loop", eventId: msg.eventId, key: msg.ref.key, payload: msg as never });
    }
    await store.close();
    // A short window: the second entry is older than it by the time the gateway starts.
    await sleep(300);
    const young = new SqliteBindingStore(`${dir}/antler.db`);
    await young.recordInbound({
      channel: "loop",
      eventId: "young-2",
      key: "loop:w:dm3",
      payload: waiting("young-2", "just now", "dm3") as never,
    });
    await young.close();
    const gw = await boot(world, { model: first.model, dir, gateway: { replay_window_ms: 200 } });
    await eventually(() => texts(world, "dm3").includes("ok: just now"), 10_000, "the young message answered");
    await eventually(() => texts(world, "dm2").includes(NOTICES.tooOld), 10_000, "the notice for the old one");
    await eventually(() => texts(world, "dm1").includes(NOTICES.tooOld), 10_000, "the notice for the other old one");
    expect(userTexts(first.model)).toEqual(["just now"]);
    await eventually(async () => (await gw.gateway.bindingStore!.unfinished()).length === 0, 10_000, "the inbox done");
  });

  it("a message waiting for a run slot shows the typing indicator while it waits", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world, { gateway: { max_concurrent_runs: 1, typing_delay_ms: 100 } });
    await keepOneSlotBusy(world, gw, 80);
    await world.userSays("wait for me", { chatId: "dm3" });
    await eventually(() => world.typing.some((t) => t.chatId === "dm3"), 3_000, "typing in the waiting conversation");
    // Its run has not started: the model has seen only the first message.
    expect(userTexts(gw.model)).toEqual(["busy elsewhere"]);
    await eventually(() => texts(world, "dm3").includes("reply to wait for me"), 15_000);
    // The busy conversation's indicator (if its first words took longer than the delay on a
    // loaded machine) ended with them: none after its first text was visible.
    const firstWords = world.botMessages("dm2")[0]!.versions[0]!.at;
    expect(world.typing.filter((t) => t.chatId === "dm2" && t.at > firstWords)).toHaveLength(0);
  });

  it("/stop also stops a message that is waiting for a free run slot", async () => {
    const world = new LoopbackWorld();
    const gw = await boot(world, { gateway: { max_concurrent_runs: 1 } });
    await keepOneSlotBusy(world, gw, 25);
    await world.userSays("wait for me");
    await world.userSays("/stop");
    await eventually(() => texts(world, "dm2").includes("reply to busy elsewhere"), 15_000);
    await eventually(() => texts(world).some((t) => t.startsWith("⚠️")), 5_000, "a stop notice");
    expect(texts(world)).not.toContain(NOTICES.nothingToStop);
    await sleep(200);
    expect(userTexts(gw.model)).toEqual(["busy elsewhere"]);
  });

  it("shutdown waits for a /status answer in flight instead of closing the store under it", async () => {
    const harness: Harness = {
      run: () => (async function* (): AsyncGenerator<RunEvent> {})(),
      resume: () => (async function* (): AsyncGenerator<RunEvent> {})(),
      cancel: () => false,
      getThread: async (threadId) => {
        await sleep(300);
        return { threadId, messageCount: 2, model: "slow-model", running: false };
      },
      close: async () => undefined,
    };
    const world = new LoopbackWorld();
    const gw = await startTestGateway({ channels: { loop: world.channelConfig() }, harness, drainMs: 2_000 });
    models.push(gw.model);
    await gw.gateway.bindingStore!.bindThread("loop:w:dm1", "t-1");
    const rejections: unknown[] = [];
    const onRejection = (err: unknown) => rejections.push(err);
    process.on("unhandledRejection", onRejection);
    try {
      const msg = await world.userSays("/status");
      await gw.stop(false);
      await sleep(50);
      expect(rejections).toEqual([]);
      expect(texts(world).some((t) => t.includes("Model: slow-model"))).toBe(true);
      const store = new SqliteBindingStore(`${gw.dir}/antler.db`);
      expect((await store.getInbound("loop", msg.eventId))?.state).toBe("done");
      await store.close();
    } finally {
      process.off("unhandledRejection", onRejection);
    }
  });
});
