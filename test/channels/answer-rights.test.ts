/**
 * Who may answer a pending question: the rule itself, and what follows from it through a whole
 * gateway on the loopback platform (the channel contract suite covers every platform's group).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { PendingQuestion } from "../../src/bindings/types.js";
import type { AccessRules, InboundMessage } from "../../src/channels/types.js";
import { mayAnswer, refusalText } from "../../src/core/answer-rights.js";
import { NOTICES } from "../../src/core/dispatcher.js";
import { eventually, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { contentText, type MockModel } from "../fakes/openai.js";

const RULES: AccessRules = { allowedUsers: [], allowedChats: [], requireMention: true, approvers: ["carol"] };
const PENDING: PendingQuestion = {
  threadId: "t1",
  key: "loop:w:g1",
  questionId: "q1",
  interruptId: "i1",
  question: "Which one?",
  options: ["a", "b"],
  askedBy: { id: "alice", name: "Alice" },
  createdAt: 0,
};

function from(userId: string, chatType: "direct" | "group", click = true, name?: string): InboundMessage {
  return {
    channel: "loop",
    eventId: "e1",
    ref: { channel: "loop", key: PENDING.key, chatId: "g1", chatType },
    user: { id: userId, ...(name ? { name } : {}) },
    text: click ? "" : "b",
    mentioned: true,
    ...(click ? { action: { questionId: "q1", buttonId: "2" } } : {}),
    sentAt: 0,
  };
}

describe("mayAnswer", () => {
  it("in a group lets the asker and the approvers answer, and no one else", () => {
    expect(mayAnswer(RULES, PENDING, from("alice", "group"))).toBe(true);
    expect(mayAnswer(RULES, PENDING, from("carol", "group"))).toBe(true);
    expect(mayAnswer(RULES, PENDING, from("bob", "group"))).toBe(false);
    expect(mayAnswer({ ...RULES, approvers: undefined }, PENDING, from("carol", "group"))).toBe(false);
  });

  it("changes nothing in a direct chat, or for a question stored before askers were recorded", () => {
    expect(mayAnswer(RULES, PENDING, from("bob", "direct"))).toBe(true);
    const { askedBy: _, ...legacy } = PENDING;
    expect(mayAnswer(RULES, legacy, from("bob", "group"))).toBe(true);
  });

  it("names the asker; a notice the whole chat reads also names who it is for", () => {
    expect(refusalText(PENDING, from("bob", "group", true, "Bob"), "sender")).toBe("Only Alice can answer this question.");
    expect(refusalText(PENDING, from("bob", "group", true, "Bob"), "everyone")).toBe("Bob: Only Alice can answer this question.");
    const { askedBy: _, ...anonymous } = PENDING;
    expect(refusalText(anonymous, from("bob", "group", false), "everyone")).toMatch(
      /^Only the person who asked can answer the open question here, so I didn't take your message/,
    );
  });
});

describe("answers in a group, through the gateway", () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  const ALICE = { userId: "alice", userName: "Alice" };
  const ask = (model: MockModel, question: string) =>
    model.enqueue({ toolCalls: [{ name: "ask_clarification", args: { question, options: ["Red", "Blue"] } }] });
  const shown = (world: LoopbackWorld, text: string) => world.botMessages("g1").find((m) => m.text.includes(text));

  async function start(world: LoopbackWorld): Promise<TestGateway> {
    gw = await startTestGateway({ channels: { loop: world.channelConfig({ approvers: ["carol"] }) } });
    return gw;
  }

  it("keeps a follow-up question the asker's after an approver answered the first", async () => {
    const world = new LoopbackWorld({ privateNotices: true });
    const { model } = await start(world);
    ask(model, "Which colour?");
    await world.userSays("pick for me", { chatId: "g1", chatType: "group", mentioned: true, ...ALICE });
    await eventually(() => shown(world, "Which colour?"), 10_000, "the first question");
    ask(model, "Which shade of blue?");
    await world.click("Blue", { chatId: "g1", userId: "carol", userName: "Carol" });
    await eventually(() => shown(world, "Which shade of blue?"), 10_000, "the follow-up question");
    model.enqueue({ text: "Navy it is." });
    await world.click("Red", { chatId: "g1", ...ALICE });
    await eventually(() => shown(world, "Navy it is."), 10_000, "the reply to the asker's answer");
    expect(world.privateNoticesFor("alice")).toEqual([]);
  });

  it("answers a click on a question that is no longer open privately, where the channel can", async () => {
    const world = new LoopbackWorld({ privateNotices: true });
    const { model } = await start(world);
    ask(model, "Which colour?");
    await world.userSays("pick for me", { chatId: "g1", chatType: "group", mentioned: true, ...ALICE });
    await eventually(() => shown(world, "Which colour?"), 10_000, "the question");
    const question = world.botMessages("g1").find((m) => m.buttons.length > 0)!;
    const buttons = [...question.buttons];
    model.enqueue({ text: "Red." });
    await world.click("Red", { chatId: "g1", ...ALICE });
    await eventually(() => shown(world, "Red."), 10_000, "the reply");
    // The same (now closed) question clicked again, as from a client that still shows its buttons.
    question.buttons = buttons;
    const requests = model.requests.length;
    await world.click("Blue", { chatId: "g1", userId: "bob", userName: "Bob" });
    await eventually(() => world.privateNoticesFor("bob").includes(NOTICES.staleQuestion), 5_000, "the private notice");
    await sleep(200);
    expect(world.botMessages("g1").some((m) => m.text === NOTICES.staleQuestion)).toBe(false);
    expect(model.requests.length).toBe(requests);
    expect(
      contentText(
        model.requests
          .at(-1)
          ?.messages.filter((m) => m.role === "tool")
          .at(-1)?.content,
      ),
    ).toBe("Red");
  });
});
