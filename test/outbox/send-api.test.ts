/**
 * `POST /api/send` and `POST /api/runs` through a whole gateway (SQLite, the embedded agent on
 * the mock model) and the fake Bot API: accepted only once stored, idempotent by key, refused with
 * the platform's reason for a user who never started the bot, split like a reply, run as a turn.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eventually, freePort, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { ALICE, BOB, TelegramDriver } from "../fakes/telegram/driver.js";

let driver: TelegramDriver | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await driver?.close();
  gw = undefined;
  driver = undefined;
});

async function boot(outbox: Record<string, unknown> = {}): Promise<{ driver: TelegramDriver; gw: TestGateway }> {
  driver = await TelegramDriver.start({ mode: "polling", editIntervalMs: 50 });
  const port = await freePort();
  const channels = { telegram: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) };
  gw = await startTestGateway({ channels, port, sections: { outbox: { poll_ms: 100, retry_backoff_ms: 100, ...outbox } } });
  return { driver, gw };
}

async function post(
  path: string,
  body: unknown,
  key?: string,
): Promise<{ status: number; body: Record<string, unknown>; replayed: boolean }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key) headers["idempotency-key"] = key;
  const res = await fetch(`${gw?.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    replayed: res.headers.get("idempotent-replayed") === "true",
  };
}

async function get(path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${gw?.url}${path}`);
  return (await res.json()) as Record<string, unknown>;
}

describe("POST /api/send", () => {
  it("posts to a user who wrote before, once per key, and shows the platform's message id", async () => {
    const { driver } = await boot();
    driver.fake.addChat({ id: ALICE.id, type: "private" });
    const body = { channel: "telegram", target: { user: String(ALICE.id) }, text: "**Deploy** finished ✅" };
    const first = await post("/api/send", body, "deploy-1");
    expect(first.status).toBe(202);
    expect(first.body.state).toBe("queued");
    const id = first.body.id as string;
    await eventually(async () => expect((await get(`/api/send/${id}`)).state).toBe("sent"));
    const again = await post("/api/send", body, "deploy-1");
    expect(again.status).toBe(200);
    expect(again.replayed).toBe(true);
    expect(again.body.id).toBe(id);
    const shown = await get(`/api/send/${id}`);
    const posted = driver.fake.botMessages(ALICE.id);
    expect(posted).toHaveLength(1);
    expect(posted[0]?.text).toBe("Deploy finished ✅");
    expect(shown.message_ids).toEqual([String(posted[0]?.message_id)]);
    const conflict = await post("/api/send", { ...body, text: "another text" }, "deploy-1");
    expect(conflict.status).toBe(409);
  });

  it("refuses a user who never started the bot with Telegram's reason, and bad requests with 400", async () => {
    const { driver } = await boot();
    driver.fake.addUser(BOB);
    const refused = await post("/api/send", { channel: "telegram", target: { user: String(BOB.id) }, text: "hi" }, "bob-1");
    expect(refused.status).toBe(422);
    expect(String(refused.body.error)).toMatch(/chat not found/i);
    expect(driver.fake.botMessages(BOB.id)).toHaveLength(0);
    expect((await post("/api/send", { channel: "telegram", target: { user: "1" }, text: "x" })).status).toBe(400);
    expect((await post("/api/send", { channel: "nope", target: { user: "1" }, text: "x" }, "k")).status).toBe(404);
    expect((await post("/api/send", { channel: "telegram", target: {}, text: "x" }, "k")).status).toBe(400);
  });

  it("splits a long text like a reply, and posts to a conversation by its key", async () => {
    const { driver, gw } = await boot();
    await driver.userSays("hello");
    await eventually(() => expect(driver.fake.botMessages(ALICE.id).length).toBeGreaterThan(0));
    const hi = await post("/api/send", { channel: "telegram", target: { user: String(ALICE.id) }, text: "hi" }, "hi-1");
    const key = hi.body.conversation as string;
    expect((await gw.gateway.bindingStore?.lastInbound(key))?.channel).toBe("telegram");
    await eventually(async () => expect((await get(`/api/send/${hi.body.id}`)).state).toBe("sent"));
    const before = driver.fake.botMessages(ALICE.id).length;
    const text = Array.from({ length: 900 }, (_, i) => `line ${i}`).join("\n");
    const res = await post("/api/send", { channel: "telegram", target: { key }, text }, "long-1");
    expect(res.status).toBe(202);
    await eventually(async () => expect((await get(`/api/send/${res.body.id}`)).state).toBe("sent"));
    const parts = driver.fake.botMessages(ALICE.id).slice(before);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.map((m) => m.text).join("\n")).toBe(text);
    expect((await get(`/api/send/${res.body.id}`)).message_ids).toHaveLength(parts.length);
  });
});

describe("POST /api/runs", () => {
  it("runs the agent in the conversation and streams its reply there", async () => {
    const { driver, gw } = await boot();
    driver.fake.addChat({ id: ALICE.id, type: "private" });
    gw.model.enqueue({ text: "The alert means the disk is full." });
    const res = await post(
      "/api/runs",
      { channel: "telegram", target: { user: String(ALICE.id) }, prompt: "Explain alert 42" },
      "run-1",
    );
    expect(res.status).toBe(202);
    await eventually(async () => expect((await get(`/api/runs/${res.body.id}`)).state).toBe("sent"), 15_000);
    expect(driver.fake.botMessages(ALICE.id).map((m) => m.text)).toContain("The alert means the disk is full.");
    expect(
      (await post("/api/runs", { channel: "telegram", target: { user: String(ALICE.id) }, prompt: "Explain alert 42" }, "run-1"))
        .replayed,
    ).toBe(true);
    expect(driver.fake.botMessages(ALICE.id).length).toBe(1);
  });
});
