/**
 * Tool approval in the chat, through a real gateway on the loopback channel and the mock model:
 * one message per paused call with its buttons, decisions by click and by text, edits checked
 * against the tool's schema, who may decide, the deadline, /stop, and a restart in between.
 */

import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { APPROVAL_NOTICES } from "../../src/core/approval-desk.js";
import { waitText } from "../../src/core/approvals.js";
import { type RecordingTools, recordingTools } from "../../src/testing/tools.js";
import { eventually, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { LoopbackWorld, shownText } from "../fakes/loopback.js";
import { contentText, type MockModel, startMockModel } from "../fakes/openai.js";

const FIXTURES = fileURLToPath(new URL("../harness/fixtures", import.meta.url));

let recording: RecordingTools;
const calls = () => recording.calls;

let gw: TestGateway | undefined;
let model: MockModel;
beforeEach(async () => {
  recording = recordingTools();
  model = await startMockModel();
});
afterEach(async () => {
  await gw?.stop(false);
  gw = undefined;
  await model.close();
});

function boot(world: LoopbackWorld, approvals: Record<string, unknown>, dir?: string, channel: Record<string, unknown> = {}) {
  return startTestGateway({
    channels: { loop: world.channelConfig(channel) },
    model,
    ...(dir ? { dir } : {}),
    agent: { approvals },
    tools: recording.tools,
  });
}

const email = { to: "ana@example.com", subject: "Hello" };
const texts = (world: LoopbackWorld, chatId = "dm1") => world.botMessages(chatId).map((m) => shownText(m.text));
const callMessages = (world: LoopbackWorld, chatId = "dm1") =>
  world.botMessages(chatId).filter((m) => m.text.includes("wants to run with"));
/** The text of the user's newest message in the model's latest request. */
const lastUserText = () => {
  const user = (model.requests.at(-1)?.messages ?? []).filter((m) => m.role === "user").at(-1);
  return user ? contentText(user.content) : undefined;
};
/** What the model was last shown as the result of each tool call. */
const toolResults = () =>
  (model.requests.at(-1)?.messages ?? []).filter((m) => m.role === "tool").map((m) => contentText(m.content));

describe("tool approval in the chat", () => {
  it("shows the call with its arguments and buttons; Approve runs it exactly once with them", async () => {
    const world = new LoopbackWorld();
    gw = await boot(world, { "send_*": { decisions: ["approve", "reject", "edit"] } });
    model.enqueue({ toolCalls: [{ name: "send_email", args: email }] }, { text: "Sent it." });
    await world.userSays("email Ana");
    const card = await eventually(() => callMessages(world)[0], 8_000, "the call's message");
    expect(shownText(card.text)).toContain("send_email");
    expect(shownText(card.text)).toContain('"to": "ana@example.com"');
    expect(card.buttons.map((b) => b.label)).toEqual(["Approve", "Reject", "Edit"]);
    expect(calls()).toEqual([]);

    await world.clickOn(card, "Approve", { userName: "Ana" });
    await eventually(() => texts(world).includes("Sent it."), 8_000, "the reply");
    expect(calls()).toEqual([{ name: "send_email", args: email }]);
    expect(shownText(card.text)).toContain("✅ Approved by Ana");
    expect(card.buttons).toEqual([]);
  });

  it("Reject never runs the tool, and the model reads the reason typed with it", async () => {
    const world = new LoopbackWorld();
    gw = await boot(world, { send_email: {} });
    model.enqueue({ toolCalls: [{ name: "send_email", args: email }] }, { text: "Okay, I won't." });
    await world.userSays("email Ana");
    const card = await eventually(() => callMessages(world)[0], 8_000, "the call's message");
    expect(card.buttons.map((b) => b.label)).toEqual(["Approve", "Reject"]);
    await world.userSays("reject not today");
    await eventually(() => texts(world).includes("Okay, I won't."), 8_000, "the reply");
    expect(calls()).toEqual([]);
    expect(toolResults().join("\n")).toContain("not today");
    expect(shownText(card.text)).toContain("❌ Rejected by User One: not today");
  });

  it("Edit takes the next message as the arguments, refuses invalid ones, then runs once with the edited ones", async () => {
    const world = new LoopbackWorld();
    gw = await boot(world, { send_email: { decisions: ["approve", "edit", "reject"] } });
    model.enqueue({ toolCalls: [{ name: "send_email", args: email }] }, { text: "Sent the edited one." });
    await world.userSays("email Ana");
    const card = await eventually(() => callMessages(world)[0], 8_000, "the call's message");
    await world.clickOn(card, "Edit");
    await eventually(() => texts(world).includes(APPROVAL_NOTICES.editPrompt("send_email")), 5_000, "the edit prompt");
    await world.userSays('{"to": "not an address", "subject": "Hi"}');
    await eventually(() => texts(world).some((t) => t.startsWith("Invalid arguments for send_email")), 5_000, "the refusal");
    expect(calls()).toEqual([]);
    const edited = { to: "bo@example.com", subject: "Hi" };
    await world.userSays(JSON.stringify(edited));
    await eventually(() => texts(world).includes("Sent the edited one."), 8_000, "the reply");
    expect(calls()).toEqual([{ name: "send_email", args: edited }]);
  });

  it("asks about each call of one step on its own message and resumes once all are decided", async () => {
    const world = new LoopbackWorld();
    gw = await boot(world, { send_email: {} });
    const second = { to: "cy@example.com", subject: "Later" };
    model.enqueue(
      {
        toolCalls: [
          { name: "send_email", args: email },
          { name: "send_email", args: second },
        ],
      },
      { text: "Both sent." },
    );
    await world.userSays("email Ana and Cy");
    const cards = await eventually(() => (callMessages(world).length === 2 ? callMessages(world) : undefined), 8_000, "two");
    await world.clickOn(cards[1]!, "Approve");
    await sleep(300);
    expect(model.requests).toHaveLength(1);
    expect(calls()).toEqual([]);
    await world.clickOn(cards[0]!, "Approve");
    await eventually(() => texts(world).includes("Both sent."), 8_000, "the reply");
    expect(calls()).toEqual([
      { name: "send_email", args: email },
      { name: "send_email", args: second },
    ]);
  });

  it("refuses a click by someone who may not decide, and lets a listed approver decide", async () => {
    const world = new LoopbackWorld();
    gw = await boot(world, { send_email: { approvers: ["boss"] } });
    model.enqueue({ toolCalls: [{ name: "send_email", args: email }] }, { text: "Sent." });
    await world.userSays("email Ana", { chatType: "group", mentioned: true, chatId: "g1", userId: "u1" });
    const card = await eventually(() => callMessages(world, "g1")[0], 8_000, "the call's message");
    await world.clickOn(card, "Approve", { userId: "stranger" });
    // This loopback world has no private notices: the refusal is posted for everyone to read.
    await eventually(() => texts(world, "g1").includes("Only User One can answer this question."), 5_000, "the refusal");
    expect(card.buttons).toHaveLength(2);
    expect(calls()).toEqual([]);
    await world.clickOn(card, "Approve", { userId: "boss", userName: "Boss" });
    await eventually(() => texts(world, "g1").includes("Sent."), 8_000, "the reply");
    expect(calls()).toHaveLength(1);
    expect(shownText(card.text)).toContain("Approved by Boss");
  });

  it("rejects a call nobody decided by its deadline; the model reads why", async () => {
    const world = new LoopbackWorld();
    gw = await boot(world, { send_email: { timeout_ms: 400 } });
    model.enqueue({ toolCalls: [{ name: "send_email", args: email }] }, { text: "No answer, so I did not send it." });
    await world.userSays("email Ana");
    await eventually(() => texts(world).includes("No answer, so I did not send it."), 8_000, "the reply");
    expect(calls()).toEqual([]);
    // The wait as configured, not rounded to a minute.
    expect(toolResults()).toEqual(["No decision within 0.4 seconds: the call was rejected."]);
    expect(texts(world).join("\n")).toContain("No decision within 0.4 seconds");
  });

  it("states a wait the way it was configured", () => {
    expect(waitText(15_000)).toBe("15 seconds");
    expect(waitText(1_000)).toBe("1 second");
    expect(waitText(90_000)).toBe("90 seconds");
    expect(waitText(120_000)).toBe("2 minutes");
    expect(waitText(600_000)).toBe("10 minutes");
    expect(waitText(150_000)).toBe("2 minutes 30 seconds");
    expect(waitText(3_600_000)).toBe("1 hour");
    expect(waitText(5_400_000)).toBe("1 hour 30 minutes");
    expect(APPROVAL_NOTICES.timedOut(15_000)).toBe("No decision within 15 seconds: the call was rejected.");
  });

  it("/stop rejects the waiting calls and resumes nothing; the next run reads that the user stopped them", async () => {
    const world = new LoopbackWorld();
    gw = await boot(world, { send_email: {} });
    model.enqueue({ toolCalls: [{ name: "send_email", args: email }] });
    await world.userSays("email Ana");
    const card = await eventually(() => callMessages(world)[0], 8_000, "the call's message");
    await world.userSays("/stop");
    await eventually(() => texts(world).includes(APPROVAL_NOTICES.stopped), 5_000, "the notice");
    expect(card.buttons).toEqual([]);
    await sleep(200);
    expect(model.requests).toHaveLength(1);
    model.enqueue({ text: "Fresh start." });
    await world.userSays("something else");
    await eventually(() => texts(world).includes("Fresh start."), 8_000, "the next reply");
    expect(calls()).toEqual([]);
    // A refusal, not an ignored question: the model can tell the two apart.
    expect(toolResults()).toEqual([APPROVAL_NOTICES.stoppedCall]);
    expect(lastUserText()).toBe("something else");
  });

  it("on the graph backend too, a call stopped by /stop reaches the model as stopped by the user", async () => {
    const world = new LoopbackWorld();
    gw = await startTestGateway({
      channels: { loop: world.channelConfig() },
      model,
      agent: { backend: "graph", graph: `${FIXTURES}/user-graphs.ts:approvingAgent`, approvals: { "send_*": {} } },
    });
    model.enqueue({ toolCalls: [{ name: "send_email", args: { to: "ada@example.com", body: "Hi" } }] });
    await world.userSays("email Ada");
    await eventually(() => callMessages(world)[0], 8_000, "the call's message");
    await world.userSays("/stop");
    await eventually(() => texts(world).includes(APPROVAL_NOTICES.stopped), 5_000, "the notice");
    model.enqueue({ text: "Understood." });
    await world.userSays("never mind");
    await eventually(() => texts(world).includes("Understood."), 8_000, "the next reply");
    expect(toolResults()).toEqual([APPROVAL_NOTICES.stoppedCall]);
  });

  it("keeps an approval across a restart; answered afterwards, the run resumes correctly", async () => {
    const world = new LoopbackWorld();
    gw = await boot(world, { send_email: {} });
    const dir = gw.dir;
    model.enqueue({ toolCalls: [{ name: "send_email", args: email }] }, { text: "Sent after the restart." });
    await world.userSays("email Ana");
    await eventually(() => callMessages(world)[0], 8_000, "the call's message");
    await gw.stop(false);
    gw = await boot(world, { send_email: {} }, dir);
    await world.userSays("approve");
    await eventually(() => texts(world).includes("Sent after the restart."), 8_000, "the reply");
    expect(calls()).toEqual([{ name: "send_email", args: email }]);
  });

  it("without buttons, the call's message says how to answer in words", async () => {
    const world = new LoopbackWorld({ buttons: false });
    gw = await boot(world, { send_email: {} });
    model.enqueue({ toolCalls: [{ name: "send_email", args: email }] }, { text: "Sent." });
    await world.userSays("email Ana");
    const card = await eventually(() => callMessages(world)[0], 8_000, "the call's message");
    expect(shownText(card.text)).toContain('Reply "approve" or "reject <reason>"');
    await world.userSays("approve");
    await eventually(() => texts(world).includes("Sent."), 8_000, "the reply");
    expect(calls()).toHaveLength(1);
  });
});
