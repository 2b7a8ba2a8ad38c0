/**
 * Schedules when things go wrong, through a whole gateway (SQLite, the embedded agent on the mock
 * model) and the fake Bot API: a channel taken out of the config disables its schedules with the
 * reason and fails what waited for it; a scheduled run that fails is reported once in the chat
 * and in the status; and the clock's rules on a moved clock: a fire missed past `grace_ms` is
 * recorded and not run, and one due while the last run still goes is skipped.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eventually, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { contentText } from "../fakes/openai.js";
import { ALICE, TelegramDriver } from "../fakes/telegram/driver.js";

const drivers: TelegramDriver[] = [];
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  for (const d of drivers.splice(0)) await d.close();
  gw = undefined;
});

/** The gateway's clock: real time moved forward by `offset`. */
let offset = 0;
const clock = () => Date.now() + offset;
/** Moves the gateway's clock to `ms` (it runs on from there). */
const moveTo = (ms: number) => {
  offset = ms - Date.now();
};
const POLL_MS = 100;

async function telegram(): Promise<TelegramDriver> {
  const driver = await TelegramDriver.start({ mode: "polling", editIntervalMs: 50 });
  drivers.push(driver);
  driver.fake.addChat({ id: ALICE.id, type: "private" });
  return driver;
}

async function get<T = Record<string, unknown>>(path: string): Promise<T> {
  const res = await fetch(`${gw?.url}${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

const schedule = (id: string) => get(`/api/schedules/${encodeURIComponent(id)}`);
const outbox = async () => (await get<{ entries: Array<Record<string, unknown>> }>("/api/outbox")).entries;

/** Requests whose newest user turn is `text`: one per agent run on it. */
function runsOn(gateway: TestGateway, text: string): number {
  return gateway.model.requests.filter((r) => {
    const users = r.messages.filter((m) => m.role === "user");
    return users.length > 0 && contentText(users.at(-1)?.content) === text;
  }).length;
}

describe("a channel taken out of the config", () => {
  it("disables its schedules with a reason naming it, and fails what waited for it", async () => {
    offset = 0;
    const main = await telegram();
    const spare = await telegram();
    const mainConfig = main.channelConfig({ gatewayUrl: "http://127.0.0.1:1" });
    const spareConfig = { use: "telegram", ...spare.channelConfig({ gatewayUrl: "http://127.0.0.1:1" }) };
    const job = { cron: "0 3 * * *", channel: "spare", target: { chat: ALICE.id }, message: "nightly check" };
    const outboxSection = { poll_ms: POLL_MS, retry_backoff_ms: 60_000 };
    const first = await startTestGateway({
      channels: { telegram: mainConfig, spare: spareConfig },
      clock,
      sections: { outbox: outboxSection, schedules: { jobs: { nightly: job } } },
    });
    gw = first;

    // Alice has the agent make a reminder on the spare bot.
    first.model.enqueue(
      { toolCalls: [{ name: "schedule_create", args: { message: "water the plants", in_seconds: 600 } }] },
      { text: "Will do." },
    );
    await spare.userSays("remind me in 10 minutes to water the plants");
    await eventually(() => expect(spare.botMessages().map((m) => m.text)).toContain("Will do."), 15_000, "the answer");
    const made = (await get<{ schedules: Array<Record<string, unknown>> }>("/api/schedules")).schedules.find(
      (s) => s.origin === "agent",
    );
    expect(made).toMatchObject({ channel: "spare", state: "active" });
    expect((await schedule("cfg:nightly")).state).toBe("active");

    // A message for the spare bot that Telegram refuses for now waits for its retry.
    spare.fake.inject({ method: "sendMessage", code: 502, description: "Bad Gateway", probability: 1 });
    const conversation = String(made?.conversation);
    const send = async (text: string, key: string) => {
      const res = await fetch(`${first.url}/api/send`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({ channel: "spare", target: { key: conversation }, text }),
      });
      expect(res.status).toBe(202);
      return String(((await res.json()) as { id: string }).id);
    };
    const entryId = await send("a late note", "late-1");
    await eventually(
      async () => expect(await get(`/api/send/${entryId}`)).toMatchObject({ state: "queued", attempts: 1 }),
      10_000,
      "the first failed attempt",
    );
    // Another one for the same conversation waits behind it.
    const behindId = await send("another late note", "late-2");
    const sendCalls = () => spare.fake.calls.filter((c) => c.method === "sendMessage").length;
    const callsBefore = sendCalls();

    // Back without the spare channel (its job leaves the config with it, as the config requires).
    await first.stop(false);
    const second = await startTestGateway({
      channels: { telegram: mainConfig },
      clock,
      sections: { outbox: outboxSection },
      dir: first.dir,
      model: first.model,
    });
    gw = second;
    const reason = "channel spare is not in the config (or not enabled)";
    expect(await schedule(String(made?.id))).toMatchObject({ state: "disabled", reason });
    expect((await get<{ schedules: unknown[] }>("/api/schedules")).schedules).toHaveLength(1);
    expect(await get(`/api/send/${entryId}`)).toMatchObject({ state: "failed", error: reason, error_code: "channel_removed" });
    expect((await outbox()).find((e) => e.id === entryId)).toMatchObject({ state: "failed", error: reason });
    expect(await get(`/api/send/${behindId}`)).toMatchObject({ state: "failed", error: reason, attempts: 0 });

    // Back with the channel named but switched off, and its job: the job is disabled too.
    await second.stop(false);
    const third = await startTestGateway({
      channels: { telegram: mainConfig, spare: { ...spareConfig, enabled: false } },
      clock,
      sections: { outbox: outboxSection, schedules: { jobs: { nightly: job } } },
      dir: first.dir,
      model: first.model,
    });
    gw = third;
    expect(await schedule("cfg:nightly")).toMatchObject({ state: "disabled", reason });
    expect(await schedule(String(made?.id))).toMatchObject({ state: "disabled", reason });
    // Nothing is tried again, even once the time of the retry and of the reminder has come.
    moveTo(Date.now() + 15 * 60_000);
    await sleep(POLL_MS * 8);
    expect(sendCalls()).toBe(callsBefore);
    expect(await get(`/api/send/${entryId}`)).toMatchObject({ state: "failed", attempts: 1 });
    expect(await schedule(String(made?.id))).toMatchObject({ state: "disabled", fires: 0 });
  }, 60_000);
});

describe("a scheduled run that fails", () => {
  it("is reported once in the chat and as a short reason in the status", async () => {
    offset = 0;
    const driver = await telegram();
    const prompt = "Summarise the night's alerts";
    const job = { cron: "* * * * *", channel: "telegram", target: { chat: ALICE.id }, prompt };
    gw = await startTestGateway({
      channels: { telegram: driver.channelConfig({ gatewayUrl: "http://127.0.0.1:1" }) },
      clock,
      sections: { outbox: { poll_ms: POLL_MS, retry_backoff_ms: 100 }, schedules: { jobs: { digest: job } } },
    });
    const model = gw.model;
    model.setDefault({ fault: "http500" });
    const due = Date.parse(String((await schedule("cfg:digest")).next_fire_at));
    moveTo(due + 500);

    const report = await eventually(
      async () => {
        const s = await schedule("cfg:digest");
        expect(s.last_delivery).toMatchObject({ state: "failed" });
        return s;
      },
      15_000,
      "the failed run in the status",
    );
    expect(report).toMatchObject({ last_result: "fired", fires: 1, state: "active" });
    const error = String((report.last_delivery as { error: string }).error);
    expect(error).toMatch(/model_error/);
    expect(error.length).toBeLessThanOrEqual(300);
    expect(error).not.toMatch(/[{}]/);
    const entries = (await outbox()).filter((e) => e.source === "schedule:cfg:digest");
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ kind: "run", state: "failed", error, error_code: "run_failed" });

    await sleep(POLL_MS * 8);
    const texts = driver.botMessages().map((m) => m.text);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatch(/model service had an error/);
    expect(texts[0]).not.toMatch(/[{}]|500/);
    // The run was made once: a failed run is not run again (its tools may have acted).
    expect(runsOn(gw, prompt)).toBe(1);
  }, 60_000);
});

describe("a reminder for someone who blocked the bot", () => {
  it("is disabled with the reason, and nothing more is tried", async () => {
    offset = 0;
    const driver = await telegram();
    const job = { cron: "* * * * *", channel: "telegram", target: { chat: ALICE.id }, message: "stand-up in 5" };
    gw = await startTestGateway({
      channels: { telegram: driver.channelConfig({ gatewayUrl: "http://127.0.0.1:1" }) },
      clock,
      sections: { outbox: { poll_ms: POLL_MS, retry_backoff_ms: 100 }, schedules: { jobs: { standup: job } } },
    });
    driver.fake.inject({
      method: "sendMessage",
      code: 403,
      description: "Forbidden: bot was blocked by the user",
      probability: 1,
    });
    const first = Date.parse(String((await schedule("cfg:standup")).next_fire_at));
    moveTo(first + 500);
    const report = await eventually(
      async () => {
        const s = await schedule("cfg:standup");
        expect(s.state).toBe("disabled");
        return s;
      },
      10_000,
      "the schedule disabled",
    );
    expect(String(report.reason)).toMatch(/^its target cannot be reached: .*blocked by the user/);
    expect(report.last_delivery).toMatchObject({ state: "failed" });
    const attempts = () => driver.fake.calls.filter((c) => c.method === "sendMessage").length;
    expect(attempts()).toBe(1);
    // Its next due time comes and goes: nothing is posted or tried, and no notice goes to a chat that cannot take one.
    moveTo(first + 60_500);
    await sleep(POLL_MS * 8);
    expect(attempts()).toBe(1);
    expect((await schedule("cfg:standup")).fires).toBe(1);
    expect(driver.botMessages()).toEqual([]);
    // A restart alone does not bring it back: the same target in the config stays disabled.
    const dir = gw.dir;
    await gw.stop();
    gw = await startTestGateway({
      channels: { telegram: driver.channelConfig({ gatewayUrl: "http://127.0.0.1:1" }) },
      clock,
      dir,
      sections: { outbox: { poll_ms: POLL_MS, retry_backoff_ms: 100 }, schedules: { jobs: { standup: job } } },
    });
    expect(await schedule("cfg:standup")).toMatchObject({ state: "disabled", reason: report.reason });
  }, 60_000);
});

describe("the schedule clock", () => {
  it("skips a fire while the last run still goes, and records one missed past grace_ms without running it", async () => {
    offset = 0;
    const driver = await telegram();
    const prompt = "Check the build";
    const job = { cron: "* * * * *", channel: "telegram", target: { chat: ALICE.id }, prompt };
    gw = await startTestGateway({
      channels: { telegram: driver.channelConfig({ gatewayUrl: "http://127.0.0.1:1" }) },
      clock,
      sections: {
        outbox: { poll_ms: POLL_MS, retry_backoff_ms: 100 },
        schedules: { grace_ms: 5_000, jobs: { build: job } },
      },
    });
    const model = gw.model;
    const texts = () => driver.botMessages().map((m) => m.text);
    // The first run takes a while to start answering.
    model.enqueue({ text: "Build is green.", firstByteMs: 2_500 });
    const first = Date.parse(String((await schedule("cfg:build")).next_fire_at));
    moveTo(first + 500);
    await eventually(async () => expect((await schedule("cfg:build")).fires).toBe(1), 10_000, "the first fire");
    await eventually(() => expect(runsOn(gw as TestGateway, prompt)).toBe(1), 10_000, "the first run");

    // The next due time comes while that run still goes: skipped, not piled up.
    moveTo(first + 60_000 + 500);
    const skipped = await eventually(
      async () => {
        const s = await schedule("cfg:build");
        expect(s.skipped).toBe(1);
        return s;
      },
      10_000,
      "the skip",
    );
    expect(skipped).toMatchObject({ fires: 1, last_result: "skipped", next_fire_at: new Date(first + 120_000).toISOString() });
    await eventually(() => expect(texts()).toContain("Build is green."), 15_000, "the first run's answer");
    expect(runsOn(gw, prompt)).toBe(1);
    await eventually(
      async () => expect((await schedule("cfg:build")).last_delivery).toEqual({ state: "sent" }),
      10_000,
      "the first run's end",
    );

    // Down (as far as the clock can tell) past grace_ms: missed, recorded, not run, and the next
    // due time counted from now, so the due times missed collapse into one.
    moveTo(first + 120_000 + 30_000);
    const missed = await eventually(
      async () => {
        const s = await schedule("cfg:build");
        expect(s.missed).toBe(1);
        return s;
      },
      10_000,
      "the miss",
    );
    expect(missed).toMatchObject({ fires: 1, skipped: 1, last_result: "missed", state: "active" });
    expect(missed.next_fire_at).toBe(new Date(first + 180_000).toISOString());
    await sleep(POLL_MS * 8);
    expect(runsOn(gw, prompt)).toBe(1);
    expect(texts()).toEqual(["Build is green."]);
    expect((await outbox()).filter((e) => e.source === "schedule:cfg:build")).toHaveLength(1);
  }, 60_000);
});
