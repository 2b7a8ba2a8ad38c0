/**
 * Reminders end to end: a whole gateway (SQLite, the embedded agent on the mock model) with the
 * real SDKs against the Telegram and Slack fakes. The agent makes a reminder with its
 * `schedule_create` tool, people list and cancel with `/schedules`, and after a restart on a
 * clock moved past the due time the reminder arrives once, where it was asked for: the DM, or
 * the Slack thread.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eventually, freePort, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { slackConfigFor } from "../fakes/slack/rig.js";
import { TelegramDriver } from "../fakes/telegram/driver.js";

let driver: TelegramDriver | undefined;
let slack: FakeSlack | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await driver?.close();
  await slack?.close();
  gw = undefined;
  driver = undefined;
  slack = undefined;
});

/** The gateway's clock: real time moved forward by `offset`. */
let offset = 0;
const clock = () => Date.now() + offset;
const POLL_MS = 100;
const sections = { outbox: { poll_ms: POLL_MS, retry_backoff_ms: 100 } };

/** The model's two steps for "remind me …": the tool call, then its answer once the tool replied. */
function remindTurn(gateway: TestGateway, message: string, seconds: number, answer = "I'll remind you"): void {
  gateway.model.enqueue({ toolCalls: [{ name: "schedule_create", args: { message, in_seconds: seconds } }] }, { text: answer });
}

/** The text of the tool's answer the model saw last (what the agent would relay). */
function lastToolAnswer(gateway: TestGateway): string {
  const messages = gateway.model.requests.at(-1)?.messages ?? [];
  const tool = [...messages].reverse().find((m) => m.role === "tool");
  return typeof tool?.content === "string" ? tool.content : JSON.stringify(tool?.content ?? "");
}

async function schedules(gateway: TestGateway): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${gateway.url}/api/schedules`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { schedules: Array<Record<string, unknown>> }).schedules;
}

describe("a reminder in a Telegram DM", () => {
  it("is made by the agent, listed and cancelled with /schedules, and fires once after a restart", async () => {
    offset = 0;
    driver = await TelegramDriver.start({ mode: "polling", editIntervalMs: 50 });
    const tg = driver;
    const channels = { telegram: tg.channelConfig({ gatewayUrl: "http://127.0.0.1:1" }) };
    const first = await startTestGateway({ channels, clock, sections });
    gw = first;
    const texts = () => tg.botMessages().map((m) => m.text);

    remindTurn(first, "stretch", 120);
    await tg.userSays("remind me in 2 minutes to stretch");
    await eventually(() => expect(texts()).toContain("I'll remind you"), 15_000, "the agent's answer");
    expect(lastToolAnswer(first)).toMatch(/^Scheduled reminder `[a-z2-7]{8}` \(remind: stretch\)/);
    const [stretch] = await schedules(first);
    expect(stretch).toMatchObject({ name: "remind: stretch", state: "active", origin: "agent", channel: "telegram" });
    const stretchId = String(stretch?.id);
    // Made on the gateway's clock: due two minutes after the call.
    const due = Date.parse(String(stretch?.next_fire_at));
    expect(due - clock()).toBeGreaterThan(100_000);
    expect(due - clock()).toBeLessThanOrEqual(120_000);

    await tg.userSays("/schedules");
    const list = await eventually(() => texts().find((t) => t.startsWith("Schedules in this conversation")), 10_000, "the list");
    expect(list).toContain(`1. ${stretchId} — remind: stretch — next `);
    expect(list).not.toContain("2. ");

    remindTurn(first, "drink water", 300, "Noted: water in 5 minutes");
    await tg.userSays("remind me in 5 minutes to drink water");
    await eventually(() => expect(texts()).toContain("Noted: water in 5 minutes"), 15_000, "the second answer");
    const water = (await schedules(first)).find((s) => s.name === "remind: drink water");
    expect(water?.state).toBe("active");

    const shown = texts().length;
    await tg.userSays("/schedules");
    await eventually(() => expect(texts().length).toBeGreaterThan(shown), 10_000, "the second list");
    expect(texts().at(-1)).toContain(`2. ${String(water?.id)} — remind: drink water`);

    await tg.userSays("/schedules cancel 2");
    await eventually(
      () => expect(texts()).toContain(`Cancelled ${String(water?.id)} — remind: drink water.`),
      10_000,
      "the cancel",
    );
    expect((await schedules(first)).map((s) => s.id)).toEqual([stretchId]);
    const afterCancel = texts().length;
    await tg.userSays("/schedules");
    await eventually(() => expect(texts().length).toBeGreaterThan(afterCancel), 10_000, "the list after cancelling");
    expect(texts().at(-1)).toContain(`1. ${stretchId} — remind: stretch`);
    expect(texts().at(-1)).not.toContain("drink water");
    expect(texts().filter((t) => t === "stretch")).toHaveLength(0);

    // Down for a while: back 5 min 10 s later, past both due times, within grace_ms of the first.
    await first.stop(false);
    offset = 310_000;
    const second = await startTestGateway({ channels, clock, sections, dir: first.dir, model: first.model });
    gw = second;
    await eventually(() => expect(texts()).toContain("stretch"), 10_000, "the reminder");
    await sleep(POLL_MS * 8);
    expect(texts().filter((t) => t === "stretch")).toHaveLength(1);
    expect(texts().filter((t) => t === "drink water")).toEqual([]);

    const [after] = await schedules(second);
    expect(after).toMatchObject({ id: stretchId, state: "done", last_result: "fired", fires: 1, next_fire_at: null });
    expect(after?.last_delivery).toEqual({ state: "sent" });
    const shownBefore = texts().length;
    await tg.userSays("/schedules");
    await eventually(() => expect(texts().length).toBeGreaterThan(shownBefore), 10_000, "the list after the fire");
    expect(texts().at(-1)).toMatch(/^No schedules in this conversation/);
    // The agent never ran for the reminder: it is posted as written.
    expect(second.model.requests.filter((r) => JSON.stringify(r.messages).includes('"stretch"'))).toHaveLength(0);
  }, 60_000);
});

describe("a reminder in a Slack channel thread", () => {
  it("fires into the thread it was asked for in", async () => {
    offset = 0;
    slack = await FakeSlack.start({ mode: "socket" });
    const fake = slack;
    const port = await freePort();
    fake.eventsUrl = `http://127.0.0.1:${port}/slack/events`;
    const channels = { slack: { enabled: true, ...slackConfigFor(fake, { edit_interval_ms: 200 }) } };
    const first = await startTestGateway({ channels, port, clock, sections });
    gw = first;

    remindTurn(first, "stretch", 120);
    const root = await fake.mention("remind me in 2 minutes to stretch");
    await eventually(() => fake.botMessages("C0001", root).find((m) => m.text === "I'll remind you"), 15_000, "the answer");
    const [made] = await schedules(first);
    expect(made).toMatchObject({ name: "remind: stretch", channel: "slack", state: "active" });
    expect(String(made?.conversation)).toContain(root);

    await fake.say("/schedules", { threadTs: root });
    const list = await eventually(
      () => fake.botMessages("C0001", root).find((m) => m.text.startsWith("Schedules in this conversation")),
      10_000,
      "the list in the thread",
    );
    // Slack shows the id as code (mrkdwn backticks).
    expect(list.text).toContain(`1. \`${String(made?.id)}\` — remind: stretch`);

    // Someone talks at the channel's top level meanwhile: the reminder still goes to the thread.
    await fake.say("unrelated chatter");
    await first.stop(false);
    offset = 150_000;
    const second = await startTestGateway({ channels, port, clock, sections, dir: first.dir, model: first.model });
    gw = second;
    const fired = await eventually(() => fake.botMessages("C0001").find((m) => m.text === "stretch"), 10_000, "the reminder");
    expect(fired.threadId).toBe(root);
    expect(
      fake.calls("chat.postMessage").find((c) => c.text === "stretch" || JSON.stringify(c).includes('"stretch"')),
    ).toMatchObject({ channel: "C0001", thread_ts: root });
    await sleep(POLL_MS * 8);
    expect(fake.botMessages("C0001").filter((m) => m.text === "stretch")).toHaveLength(1);
    expect((await schedules(second))[0]).toMatchObject({ state: "done", last_delivery: { state: "sent" } });
  }, 60_000);
});
