/**
 * Tool approval in the chat on the remote backend: a real LangGraph API server whose `approval`
 * graph pauses `send_email` with langchain's human-in-the-loop middleware (approve or reject
 * only), through the gateway and the loopback channel, and through telegraf against the
 * Telegram fake. The server's tool records what it sent, so "ran once" and "never ran" are seen
 * on the server itself.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { APPROVAL_NOTICES } from "../../src/core/approval-desk.js";
import { eventually, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { MODEL_URL_ENV, sentEmails, sentMemos } from "../fakes/langgraph/graphs.js";
import { LoopbackWorld, shownText } from "../fakes/loopback.js";
import { contentText, type MockModel, startMockModel } from "../fakes/openai.js";
import { TelegramDriver } from "../fakes/telegram/driver.js";
import { useLangGraphServer } from "../harness/remote-helpers.js";

const lg = useLangGraphServer();
const ARGS = { to: "ada@example.com", body: "The report is ready." };

let gw: TestGateway | undefined;
let model: MockModel;
let telegram: TelegramDriver | undefined;
beforeEach(async () => {
  sentEmails.length = 0;
  sentMemos.length = 0;
  model = await startMockModel();
  process.env[MODEL_URL_ENV] = model.url;
});
afterEach(async () => {
  await gw?.stop(false);
  gw = undefined;
  await telegram?.close();
  telegram = undefined;
  await model.close();
});

function boot(channels: Record<string, Record<string, unknown>>, dir?: string, approvals?: unknown): Promise<TestGateway> {
  const server = lg.server();
  return startTestGateway({
    channels,
    model,
    ...(dir ? { dir } : {}),
    agent: {
      backend: "remote",
      remote: { url: server.url, assistant_id: "approval", api_key: server.apiKey },
      // Antler's rule for the server's tool: who may decide and how long it waits.
      ...(approvals ? { approvals } : {}),
    },
  });
}

const texts = (world: LoopbackWorld) => world.botMessages("dm1").map((m) => shownText(m.text));
const callOf = (world: LoopbackWorld) => world.botMessages("dm1").find((m) => m.text.includes("wants to run with"));
const toolResults = () =>
  (model.requests.at(-1)?.messages ?? []).filter((m) => m.role === "tool").map((m) => contentText(m.content));

describe("tool approval on the remote backend", () => {
  it("Approve: the server's tool runs exactly once, with the arguments shown", async () => {
    const world = new LoopbackWorld();
    gw = await boot({ loop: world.channelConfig() });
    model.enqueue({ toolCalls: [{ name: "send_email", args: ARGS }] }, { text: "Sent it." });
    await world.userSays("email Ada");
    const call = await eventually(() => callOf(world), 10_000, "the call's message");
    expect(shownText(call.text)).toContain("send_email");
    expect(shownText(call.text)).toContain(ARGS.to);
    expect(shownText(call.text)).toContain(ARGS.body);
    // The decisions the server allows.
    expect(call.buttons.map((b) => b.label)).toEqual(["Approve", "Reject"]);
    await sleep(200);
    expect(sentEmails).toEqual([]);

    await world.clickOn(call, "Approve", { userName: "Ana" });
    await eventually(() => texts(world).includes("Sent it."), 10_000, "the reply");
    expect(sentEmails).toEqual([ARGS]);
    expect(toolResults()).toEqual([`sent to ${ARGS.to}`]);
    expect(shownText(call.text)).toContain("Approved by Ana");
    expect(call.buttons).toEqual([]);
  });

  it("Reject with a typed reason: the server's tool never runs, and the model reads the reason", async () => {
    const world = new LoopbackWorld();
    gw = await boot({ loop: world.channelConfig() });
    model.enqueue({ toolCalls: [{ name: "send_email", args: ARGS }] }, { text: "Okay, not sent." });
    await world.userSays("email Ada");
    await eventually(() => callOf(world), 10_000, "the call's message");
    await world.userSays("reject wrong person");
    await eventually(() => texts(world).includes("Okay, not sent."), 10_000, "the reply");
    await sleep(200);
    expect(sentEmails).toEqual([]);
    expect(toolResults().join("\n")).toContain("wrong person");
  });

  it("Edit: arguments the server's schema refuses get its reason; valid ones run the server's tool once", async () => {
    const world = new LoopbackWorld();
    gw = await boot({ loop: world.channelConfig() });
    model.enqueue({ toolCalls: [{ name: "send_memo", args: ARGS }] }, { text: "Sent the edited memo." });
    await world.userSays("memo Ada");
    const call = await eventually(() => callOf(world), 10_000, "the call's message");
    expect(call.buttons.map((b) => b.label)).toEqual(["Approve", "Reject", "Edit"]);
    await world.clickOn(call, "Edit");
    await world.userSays('{"to": "bo@example.com"}');
    await eventually(() => texts(world).some((t) => t.startsWith("Invalid arguments for send_memo")), 10_000, "the refusal");
    expect(sentMemos).toEqual([]);
    const edited = { to: "bo@example.com", body: "Updated." };
    await world.userSays(JSON.stringify(edited));
    await eventually(() => texts(world).includes("Sent the edited memo."), 10_000, "the reply");
    expect(sentMemos).toEqual([edited]);
  });

  it("a click by someone who may not decide is refused; the rule's approver decides", async () => {
    const world = new LoopbackWorld();
    gw = await boot({ loop: world.channelConfig() }, undefined, { send_email: { approvers: ["boss"] } });
    model.enqueue({ toolCalls: [{ name: "send_email", args: ARGS }] }, { text: "Sent." });
    await world.userSays("email Ada", { chatType: "group", mentioned: true, chatId: "g1" });
    const call = await eventually(
      () => world.botMessages("g1").find((m) => m.text.includes("wants to run with")),
      10_000,
      "the call's message",
    );
    await world.clickOn(call, "Approve", { userId: "stranger" });
    await eventually(
      () => world.botMessages("g1").some((m) => m.text === "Only User One can answer this question."),
      10_000,
      "the refusal",
    );
    await sleep(200);
    expect(sentEmails).toEqual([]);
    await world.clickOn(call, "Approve", { userId: "boss", userName: "Boss" });
    await eventually(() => world.botMessages("g1").some((m) => m.text === "Sent."), 10_000, "the reply");
    expect(sentEmails).toEqual([ARGS]);
  });

  it("a call nobody decides by the rule's deadline is rejected; the server's tool never runs", async () => {
    const world = new LoopbackWorld();
    gw = await boot({ loop: world.channelConfig() }, undefined, { send_email: { timeout_ms: 500 } });
    model.enqueue({ toolCalls: [{ name: "send_email", args: ARGS }] }, { text: "Nobody answered, so not sent." });
    await world.userSays("email Ada");
    await eventually(() => texts(world).includes("Nobody answered, so not sent."), 10_000, "the reply");
    expect(sentEmails).toEqual([]);
    expect(toolResults().join("\n")).toContain("No decision within");
  });

  it("/stop: the server's tool never runs, and the next run's model reads that the user stopped it", async () => {
    const world = new LoopbackWorld();
    gw = await boot({ loop: world.channelConfig() });
    model.enqueue({ toolCalls: [{ name: "send_email", args: ARGS }] });
    await world.userSays("email Ada");
    await eventually(() => callOf(world), 10_000, "the call's message");
    await world.userSays("/stop");
    await eventually(() => texts(world).includes(APPROVAL_NOTICES.stopped), 10_000, "the notice");
    model.enqueue({ text: "Fine, not sent." });
    await world.userSays("forget it");
    await eventually(() => texts(world).includes("Fine, not sent."), 10_000, "the next reply");
    expect(sentEmails).toEqual([]);
    expect(toolResults()).toEqual([APPROVAL_NOTICES.stoppedCall]);
  });

  it("an approval pending across a gateway restart, approved afterwards, resumes the remote run once", async () => {
    const world = new LoopbackWorld();
    gw = await boot({ loop: world.channelConfig() });
    const dir = gw.dir;
    model.enqueue({ toolCalls: [{ name: "send_email", args: ARGS }] }, { text: "Sent after the restart." });
    await world.userSays("email Ada");
    await eventually(() => callOf(world), 10_000, "the call's message");
    await gw.stop(false);
    gw = await boot({ loop: world.channelConfig() }, dir);
    await world.userSays("approve");
    await eventually(() => texts(world).includes("Sent after the restart."), 10_000, "the reply");
    await sleep(200);
    expect(sentEmails).toEqual([ARGS]);
  });

  it("through telegraf on the Telegram fake: Approve by button runs the server's tool once", async () => {
    telegram = await TelegramDriver.start({ mode: "polling" });
    gw = await boot({ telegram: telegram.channelConfig({ gatewayUrl: "" }) });
    model.enqueue({ toolCalls: [{ name: "send_email", args: ARGS }] }, { text: "Sent from Telegram." });
    await telegram.userSays("email Ada");
    const t = telegram;
    const call = await eventually(
      () => t.botMessages().find((m) => m.text.includes("wants to run with")),
      10_000,
      "the call's message",
    );
    expect(shownText(call.text)).toContain(ARGS.to);
    expect(call.buttons).toEqual(["Approve", "Reject"]);
    await t.click("Approve");
    await eventually(() => t.botMessages().some((m) => m.text === "Sent from Telegram."), 10_000, "the reply");
    expect(sentEmails).toEqual([ARGS]);
    const closed = t.botMessages().find((m) => m.id === call.id);
    expect(closed?.buttons).toEqual([]);
    expect(closed?.text).toContain("Approved");
  });
});
