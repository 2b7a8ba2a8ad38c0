/**
 * Issue 7's acceptance tests beyond the contract suite, through a whole gateway (dispatcher,
 * renderer, SQLite, embedded harness with the mock model) and the fake Feishu.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eventually, freePort, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { FeishuDriver } from "../fakes/feishu/driver.js";
import { DM_CHAT, GROUP_CHAT } from "../fakes/feishu/index.js";
import type { FakeMessage } from "../fakes/feishu/model.js";
import { contentText, lastUserText } from "../fakes/openai.js";

const REPLY =
  "Feishu shows this answer typing itself into a card. Every update carries a larger sequence " +
  "number, the pace stays under ten operations a second, and the last text must be exact.";

let driver: FeishuDriver | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await driver?.close();
  gw = undefined;
  driver = undefined;
});

async function boot(mode: "websocket" | "webhook"): Promise<{ driver: FeishuDriver; gw: TestGateway }> {
  driver = await FeishuDriver.start({ mode });
  const port = await freePort();
  const channels = { feishu: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) };
  gw = await startTestGateway({ channels, port });
  return { driver, gw };
}

async function expectStreamedCard(d: FeishuDriver, message: FakeMessage): Promise<void> {
  const card = d.fake.world.cards.get(message.cardId ?? "");
  expect(card, "the reply is a CardKit card").toBeDefined();
  // Closing streaming mode is the card's last operation, just after the final text.
  await eventually(() => card?.card.config?.streaming_mode === false, 5000, "streaming mode closed");
  const seqs = card?.sequences ?? [];
  expect(seqs.length).toBeGreaterThanOrEqual(3);
  for (let i = 1; i < seqs.length; i++) expect(seqs[i], `sequence ${i}`).toBeGreaterThan(seqs[i - 1] as number);
  expect(d.fake.world.rateLimited(), "no operation was over the limit").toEqual([]);
}

describe("feishu group assistant end to end", () => {
  it("ignores unmentioned messages, streams a card into the topic of a mention, continues the topic", async () => {
    const { driver, gw } = await boot("websocket");
    await driver.fake.userSays({ chatType: "group", text: "people talking" });
    await sleep(300);
    expect(gw.model.requests).toHaveLength(0);
    expect(driver.fake.botMessages(GROUP_CHAT)).toHaveLength(0);

    gw.model.enqueue({ text: REPLY, chunkSize: 6, delayMs: 15 });
    const asked = await driver.fake.userSays({ chatType: "group", text: "explain streaming", mentionBot: true });
    const reply = await eventually(
      () => driver.fake.botMessages(GROUP_CHAT).find((m) => m.text === REPLY),
      20_000,
      "the streamed reply",
    );
    expect(lastUserText(gw.model.requests[0]!)).toBe("explain streaming");
    expect(reply).toMatchObject({ rootId: asked.messageId, inThread: true });
    expect(reply.versions.length).toBeGreaterThanOrEqual(3);
    await expectStreamedCard(driver, reply);
    const user = driver.fake.world.message(asked.messageId as string);
    await eventually(() => user?.reactions.length === 0, 5000, "the typing reaction removed");

    gw.model.enqueue({ text: "Yes, the same topic." });
    await driver.fake.userSays({ chatType: "group", rootId: asked.messageId, text: "and then?" });
    const second = await eventually(
      () => driver.fake.botMessages(GROUP_CHAT).find((m) => m.text === "Yes, the same topic."),
      20_000,
      "the follow-up reply",
    );
    expect(second).toMatchObject({ rootId: asked.messageId, inThread: true });
    const history = gw.model.requests.at(-1)?.messages.map((m) => contentText(m.content)) ?? [];
    expect(history, "the follow-up runs in the same thread").toContain("explain streaming");
    expect(history).toContain(REPLY);
  });

  it("after a restart, a follow-up in the topic without a mention still continues it", async () => {
    const { driver, gw: first } = await boot("websocket");
    first.model.enqueue({ text: "Before the restart." });
    const asked = await driver.fake.userSays({ chatType: "group", text: "remember the heron", mentionBot: true });
    await eventually(() => driver.fake.botMessages(GROUP_CHAT).find((m) => m.text === "Before the restart."), 20_000);
    await first.stop(false);
    const port = await freePort();
    gw = await startTestGateway({
      channels: { feishu: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) },
      port,
      model: first.model,
      dir: first.dir,
    });
    gw.model.enqueue({ text: "After the restart." });
    await driver.fake.userSays({ chatType: "group", rootId: asked.messageId, text: "what was the bird?" });
    await eventually(() => driver.fake.botMessages(GROUP_CHAT).find((m) => m.text === "After the restart."), 20_000, "the reply");
    const history = gw.model.requests.at(-1)?.messages.map((m) => contentText(m.content)) ?? [];
    expect(history).toContain("remember the heron");
  });

  it("a new mention outside the topic starts a new conversation", async () => {
    const { driver, gw } = await boot("websocket");
    gw.model.enqueue({ text: "first" }, { text: "second" });
    await driver.fake.userSays({ chatType: "group", text: "one", mentionBot: true });
    await eventually(() => driver.fake.botMessages(GROUP_CHAT).find((m) => m.text === "first"), 15_000, "first reply");
    await driver.fake.userSays({ chatType: "group", text: "two", mentionBot: true });
    await eventually(() => driver.fake.botMessages(GROUP_CHAT).find((m) => m.text === "second"), 15_000, "second reply");
    const history = gw.model.requests.at(-1)?.messages.map((m) => contentText(m.content)) ?? [];
    expect(history).not.toContain("one");
  });
});

describe("feishu CardKit fallbacks end to end", () => {
  it("uses a PATCHed card when CardKit cannot create cards, and the final text arrives", async () => {
    const { driver, gw } = await boot("websocket");
    driver.fake.failNext("card_create", { status: 400, code: 300303, msg: "cardkit down" }, 10);
    gw.model.enqueue({ text: REPLY, chunkSize: 8, delayMs: 15 });
    await driver.userSays("fallback please");
    const reply = await eventually(() => driver.fake.botMessages(DM_CHAT).find((m) => m.text === REPLY), 20_000, "reply");
    expect(reply.cardId).toBeUndefined();
    expect(reply.msgType).toBe("interactive");
  });

  it("finishes with the exact text when CardKit fails in the middle of a stream", async () => {
    const { driver, gw } = await boot("websocket");
    driver.fake.failNext("card_content", { status: 500, code: 300500, msg: "internal error" }, 100);
    gw.model.enqueue({ text: REPLY, chunkSize: 8, delayMs: 15 });
    await driver.userSays("break the stream");
    const reply = await eventually(
      () => driver.fake.botMessages(DM_CHAT).find((m) => m.text === REPLY),
      20_000,
      "the final text",
    );
    // The core edits the broken stream's message; a CardKit card is replaced whole, in place.
    expect(reply.cardId).toBeDefined();
    expect(driver.fake.botMessages(DM_CHAT)).toHaveLength(1);
    const card = driver.fake.world.cards.get(reply.cardId as string);
    await eventually(() => card?.card.config?.streaming_mode === false, 5000, "streaming mode closed");
  });

  it("falls back to plain text when cards fail altogether", async () => {
    const { driver, gw } = await boot("websocket");
    driver.fake.failNext("card_create", { status: 400, code: 300303, msg: "cardkit down" }, 10);
    driver.fake.failNext("reply", { status: 400, code: 230099, msg: "card refused", msgType: "interactive" }, 10);
    gw.model.enqueue({ text: "Plain **text** reply." });
    await driver.userSays("no cards at all");
    const reply = await eventually(
      () => driver.fake.botMessages(DM_CHAT).find((m) => m.text === "Plain text reply."),
      20_000,
      "the plain reply",
    );
    expect(reply.msgType).toBe("text");
  });
});

describe("feishu webhook end to end", () => {
  it("answers URL verification", async () => {
    const { driver } = await boot("webhook");
    const res = await driver.fake.verifyUrl();
    expect(res.status).toBe(200);
    expect(res.body).toHaveProperty("challenge");
  });

  it("rejects a bad signature, an undecryptable body and a wrong token without starting a run", async () => {
    const { driver, gw } = await boot("webhook");
    const bad = await driver.fake.userSays({ text: "forged" }, { badSignature: true });
    const garbled = await driver.fake.userSays({ text: "garbled" }, { corrupt: true });
    const unsigned = await driver.fake.userSays({ text: "unsigned" }, { unsigned: true });
    const wrongToken = driver.fake.envelope("im.message.receive_v1", {});
    wrongToken.header.token = "not-the-token";
    const token = await driver.fake.deliver(wrongToken);
    expect(bad.webhook?.status).toBe(401);
    expect(garbled.webhook?.status).toBe(400);
    expect(unsigned.webhook?.status).toBe(401);
    expect(token.webhook?.status).toBe(401);
    await sleep(300);
    expect(gw.model.requests).toHaveLength(0);
    expect(driver.fake.botMessages()).toHaveLength(0);
  });

  it("runs once for a redelivered event_id", async () => {
    const { driver, gw } = await boot("webhook");
    gw.model.enqueue({ text: "Just once." });
    const first = await driver.fake.userSays({ text: "retry me" });
    const again = await driver.fake.redeliver(first.eventId);
    expect(again.webhook?.status).toBe(200);
    await eventually(() => driver.fake.botMessages(DM_CHAT).find((m) => m.text === "Just once."), 15_000, "reply");
    await driver.fake.redeliver(first.eventId);
    await sleep(300);
    expect(gw.model.requests.filter((r) => lastUserText(r) === "retry me")).toHaveLength(1);
    expect(driver.fake.botMessages(DM_CHAT).filter((m) => m.text === "Just once.")).toHaveLength(1);
  });

  it("streams through CardKit in webhook mode too, and a click answers within 3 s", async () => {
    const { driver, gw } = await boot("webhook");
    gw.model.enqueue({ text: REPLY, chunkSize: 6, delayMs: 15 });
    await driver.userSays("stream over webhook");
    const reply = await eventually(() => driver.fake.botMessages(DM_CHAT).find((m) => m.text === REPLY), 20_000, "reply");
    await expectStreamedCard(driver, reply);
    gw.model.enqueue({
      toolCalls: [{ name: "ask_clarification", args: { question: "Tea or coffee?", options: ["Tea", "Coffee"] } }],
    });
    await driver.userSays("what should I drink");
    await eventually(() => driver.fake.botMessages(DM_CHAT).find((m) => m.buttons.length === 2), 15_000, "the question");
    gw.model.enqueue({ text: "Tea then." });
    const click = await driver.fake.click("Tea");
    expect(click.webhook?.status).toBe(200);
    expect(click.webhook?.ms).toBeLessThan(3000);
    expect(click.answer).toMatchObject({ toast: { content: "Selected: Tea" } });
    await eventually(() => driver.fake.botMessages(DM_CHAT).find((m) => m.text === "Tea then."), 15_000, "answer");
  });
});
