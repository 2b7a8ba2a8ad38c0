/**
 * Issue 5's acceptance tests that go beyond the contract suite, through a whole gateway
 * (dispatcher, renderer, SQLite, embedded harness with the mock model) and the fake Bot API.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eventually, freePort, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { lastUserText } from "../fakes/openai.js";
import { ALICE, TelegramDriver, WEBHOOK_SECRET } from "../fakes/telegram/driver.js";
import type { ChatMessage } from "../fakes/telegram/index.js";

const INTERVAL = 250;
/**
 * The core counts the interval from the end of the previous call, so what the fake receives is
 * paced at least as strictly as the calls the core starts; 1 ms covers clock rounding.
 */
const ARRIVAL_SLACK = 1;
const GROUP = { id: -100777888, type: "supergroup" as const };
const LONG =
  "Telegram shows this answer growing by edits. Every edit must differ from the previous one, " +
  "the pace must respect the configured interval, and the last version must be this exact text, " +
  "character for character, with nothing dropped at the end.";

let driver: TelegramDriver | undefined;
let gw: TestGateway | undefined;
/** When the core called the adapter's send/edit, in order. */
let callStarts: number[] = [];

afterEach(async () => {
  await gw?.stop();
  await driver?.close();
  gw = undefined;
  driver = undefined;
});

async function boot(mode: "polling" | "webhook"): Promise<{ driver: TelegramDriver; gw: TestGateway }> {
  driver = await TelegramDriver.start({ mode, editIntervalMs: INTERVAL });
  const port = await freePort();
  const channels = { telegram: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) };
  gw = await startTestGateway({ channels, port });
  callStarts = [];
  const channel = gw.gateway.slot("telegram")?.channel;
  if (!channel) throw new Error("the telegram channel did not load");
  for (const method of ["send", "edit"] as const) {
    const original = channel[method].bind(channel) as (...args: unknown[]) => Promise<unknown>;
    Object.assign(channel, {
      [method]: (...args: unknown[]) => {
        callStarts.push(Date.now());
        return original(...args);
      },
    });
  }
  return { driver, gw };
}

function expectPacedEdits(message: ChatMessage): void {
  for (let i = 1; i < message.versions.length; i++) {
    const prev = message.versions[i - 1]!;
    const cur = message.versions[i]!;
    expect(cur.text, `version ${i} repeats the previous text`).not.toBe(prev.text);
    expect(cur.at - prev.at, `version ${i} arrived too soon`).toBeGreaterThanOrEqual(INTERVAL - ARRIVAL_SLACK);
  }
  expect(callStarts.length).toBeGreaterThanOrEqual(message.versions.length);
  for (let i = 1; i < callStarts.length; i++) {
    expect(callStarts[i]! - callStarts[i - 1]!, `call ${i} started too soon`).toBeGreaterThanOrEqual(INTERVAL - 1);
  }
}

describe("telegram end to end", () => {
  it("streams a DM reply in at least two edits, paced, never repeating, ending exact", async () => {
    const { driver, gw } = await boot("polling");
    // A model slow to start: the user sees the typing indicator while waiting for its first words.
    gw.model.enqueue({ text: LONG, chunkSize: 5, delayMs: 15, firstByteMs: 900 });
    await driver.userSays("stream something long");
    const message = await eventually(
      () => driver.fake.botMessages(ALICE.id).find((m) => m.text === LONG),
      20_000,
      "the final reply",
    );
    expect(message.versions.length - 1, "edits after the first post").toBeGreaterThanOrEqual(2);
    expectPacedEdits(message);
    expect(driver.fake.chat(ALICE.id)!.typing.length, "typing shown while waiting").toBeGreaterThanOrEqual(1);
  });

  it("shows no typing indicator for a reply whose first words come at once", async () => {
    const { driver, gw } = await boot("polling");
    gw.model.enqueue({ text: "Right away." });
    const sent = Date.now();
    await driver.userSays("quick one");
    const reply = await eventually(
      () => driver.fake.botMessages(ALICE.id).find((m) => m.text === "Right away."),
      10_000,
      "the reply",
    );
    await sleep(700);
    const typing = driver.fake.chat(ALICE.id)!.typing;
    // Within typing_delay_ms (500 by default): no indicator at all. A loaded machine can take
    // longer; then the indicator must still end with the first words.
    if (reply.date - sent < 400) expect(typing, "no sendChatAction before an instant reply").toHaveLength(0);
    expect(
      typing.filter((at) => at > reply.date),
      "no sendChatAction after the reply showed",
    ).toHaveLength(0);
  });

  it("in a group ignores an unmentioned message and answers a mention with it stripped", async () => {
    const { driver, gw } = await boot("polling");
    const bob = { id: 2002, first_name: "Bob" };
    await driver.deliver(driver.fake.say(GROUP, bob, "just talking to people here"));
    await sleep(500);
    expect(gw.model.requests).toHaveLength(0);
    expect(driver.fake.botMessages(GROUP.id)).toHaveLength(0);

    await driver.deliver(driver.fake.say(GROUP, bob, `@${driver.fake.bot.username} what is two plus two?`));
    const reply = await eventually(() => driver.fake.botMessages(GROUP.id).at(-1), 15_000, "the group reply");
    expect(lastUserText(gw.model.requests[0]!)).toBe("what is two plus two?");
    await eventually(
      () => driver.fake.botMessages(GROUP.id).find((m) => m.text === "ok: what is two plus two?"),
      10_000,
      "final",
    );
    expect(reply.replyTo, "the answer quotes the question in a group").toBeDefined();
  });

  it("with 429 on 30% of edits the final text still arrives and no call beats retry_after", async () => {
    const { driver, gw } = await boot("polling");
    driver.fake.inject({ method: "editMessageText", code: 429, retryAfter: 1, probability: 0.3, seed: 7 });
    gw.model.enqueue({ text: LONG, chunkSize: 4, delayMs: 20 });
    await driver.userSays("stream through rate limits");
    const message = await eventually(
      () => driver.fake.botMessages(ALICE.id).find((m) => m.text === LONG),
      30_000,
      "the final reply",
    );
    const limited = driver.fake.calls.filter((c) => c.status === 429);
    expect(limited.length, "the fault fired").toBeGreaterThanOrEqual(1);
    expect(driver.fake.earlyCalls, "calls made inside a retry_after window").toEqual([]);
    expectPacedEdits(message);
  });

  it("webhook: a wrong or missing secret gets 403 and starts no run; a redelivered update_id runs once", async () => {
    const { driver, gw } = await boot("webhook");
    const forged = {
      update_id: 9_000_001,
      message: {
        message_id: 1,
        from: { ...ALICE, is_bot: false },
        chat: { id: ALICE.id, type: "private" },
        date: 1,
        text: "forged",
      },
    };
    expect(await driver.fake.postToWebhook(forged, "not-the-secret")).toBe(403);
    expect(await driver.fake.postToWebhook(forged, undefined)).toBe(403);
    await sleep(300);
    expect(gw.model.requests).toHaveLength(0);

    const update = driver.fake.dm(ALICE, "run me once");
    await driver.deliver(update);
    await eventually(() => driver.fake.botMessages(ALICE.id).find((m) => m.text === "ok: run me once"), 15_000, "the reply");
    driver.fake.redeliver(update);
    expect(await driver.fake.postToWebhook(update, WEBHOOK_SECRET)).toBe(200);
    await eventually(() => driver.fake.updates.handedCount(update.update_id) >= 2, 5_000, "the redelivery");
    await sleep(400);
    expect(gw.model.requests.filter((r) => lastUserText(r) === "run me once")).toHaveLength(1);
    expect(driver.fake.botMessages(ALICE.id).filter((m) => m.text === "ok: run me once")).toHaveLength(1);
  });
});
