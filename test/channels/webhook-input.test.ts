/**
 * Bad input on every webhook route, through a whole gateway: malformed JSON, wrong content
 * types, authentic JSON of the wrong shape and oversized bodies get a 4xx (never 500), start no
 * run, record nothing in the inbox and log no error (an envelope type Antler does not handle is
 * acknowledged with 200 and ignored). A good request afterwards still works, so
 * the route was live all along. Also Feishu's replay window.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.js";
import { eventually, freePort, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { FakeDingTalk } from "../fakes/dingtalk/index.js";
import { DM_CHAT, encryptPayload, FakeFeishu, signature } from "../fakes/feishu/index.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { slackConfigFor } from "../fakes/slack/rig.js";
import { slackSignature } from "../fakes/slack/transport.js";
import { ALICE, TelegramDriver, WEBHOOK_PATH, WEBHOOK_SECRET } from "../fakes/telegram/driver.js";

interface LogLine {
  level: number;
  msg: string;
  err?: { stack?: string };
}

let gw: TestGateway | undefined;
let closeFake: (() => Promise<unknown>) | undefined;
let lines: LogLine[] = [];

afterEach(async () => {
  await gw?.stop();
  await closeFake?.();
  gw = undefined;
  closeFake = undefined;
});

async function boot(channels: Record<string, Record<string, unknown>>, port: number): Promise<TestGateway> {
  lines = [];
  const logger = createLogger({
    level: "debug",
    format: "json",
    destination: { write: (l: string) => void lines.push(JSON.parse(l) as LogLine) },
  });
  gw = await startTestGateway({ channels, port, logger });
  return gw;
}

interface BadCase {
  name: string;
  body: string;
  contentType?: string;
  status: number;
}

const OVERSIZED = "x".repeat(1024 * 1024 + 1);

/** Cases every webhook must refuse; each platform adds its own. */
const COMMON: BadCase[] = [
  { name: "malformed JSON", body: '{"not json', status: 400 },
  { name: "JSON null", body: "null", status: 400 },
  { name: "a JSON list", body: "[]", status: 400 },
  { name: "a JSON number", body: "42", status: 400 },
  { name: "a form body", body: "a=1&b=2", contentType: "application/x-www-form-urlencoded", status: 400 },
  { name: "text/plain junk", body: "hello there", contentType: "text/plain", status: 400 },
  { name: "an oversized body", body: OVERSIZED, status: 413 },
];

const FORM = { contentType: "application/x-www-form-urlencoded" };
const slackEvent = (event: Record<string, unknown>) =>
  JSON.stringify({
    type: "event_callback",
    event_id: `Ev${Math.random()}`,
    event: { user: "U0001", ts: "1.1", channel: "D1", ...event },
  });
const slackForm = (payload: Record<string, unknown>) => `payload=${encodeURIComponent(JSON.stringify(payload))}`;

/** Posts every case, checks each status, then that nothing ran, was recorded or logged as an error. */
async function expectNoRun(g: TestGateway, cases: BadCase[], post: (c: BadCase) => Promise<Response>) {
  const answered: Array<[string, number]> = [];
  for (const c of cases) {
    const res = await post(c);
    await res.text();
    answered.push([c.name, res.status]);
  }
  expect(answered).toEqual(cases.map((c) => [c.name, c.status]));
  expect(g.model.requests).toHaveLength(0);
  expect(await g.gateway.bindingStore?.unfinished()).toEqual([]);
  expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  expect(lines.some((l) => l.err?.stack)).toBe(false);
}

describe("every webhook answers bad input with a 4xx and starts no run", () => {
  it("DingTalk HTTP callback: signed non-messages get 400 with the reason, never the inbox", async () => {
    const fake = await FakeDingTalk.start();
    closeFake = () => fake.close();
    const port = await freePort();
    const g = await boot(
      {
        dingtalk: {
          enabled: true,
          mode: "http",
          ...fake.connection(),
        },
      },
      port,
    );
    fake.callbackUrl = `${g.url}/dingtalk/dingtalk/callback`;
    const noMsgId = { ...fake.robotMessageFor("hi"), msgId: undefined };
    const cases: BadCase[] = [
      ...COMMON,
      { name: "an unknown object", body: '{"type":"x"}', status: 400 },
      { name: "a message without msgId", body: JSON.stringify(noMsgId), status: 400 },
      { name: "text that is a list", body: JSON.stringify({ ...fake.robotMessageFor("hi"), text: [] }), status: 400 },
    ];
    await expectNoRun(g, cases, (c) => fake.postSigned(c.body, c.contentType ? { contentType: c.contentType } : {}));
    const res = await fake.postSigned('{"type":"x"}');
    expect(await res.json()).toEqual({ error: "not a robot message: msgId is missing" });

    g.model.enqueue({ text: "still here" });
    expect((await fake.userSays("a real message"))?.status).toBe(200);
    await eventually(() => g.model.requests.length === 1, 10_000, "the run of the good message");
  });

  it("Slack /slack/events: 413 for an oversized body even unsigned, 400 for signed junk", async () => {
    const fake = await FakeSlack.start({ mode: "webhook" });
    closeFake = () => fake.close();
    const port = await freePort();
    fake.eventsUrl = `http://127.0.0.1:${port}/slack/events`;
    const g = await boot({ slack: { enabled: true, ...slackConfigFor(fake) } }, port);
    const post = (c: BadCase, signed = true) => {
      const ts = Math.floor(Date.now() / 1000);
      const headers: Record<string, string> = { "content-type": c.contentType ?? "application/json" };
      if (signed) {
        headers["x-slack-request-timestamp"] = String(ts);
        headers["x-slack-signature"] = slackSignature(fake.signingSecret, ts, c.body);
      }
      return fetch(fake.eventsUrl, { method: "POST", headers, body: c.body });
    };
    const cases: BadCase[] = [
      ...COMMON.filter((c) => c.contentType !== "application/x-www-form-urlencoded"),
      {
        name: "a form whose payload is not JSON",
        body: "payload=%7Bnope",
        contentType: "application/x-www-form-urlencoded",
        status: 400,
      },
      {
        name: "an event sent as text/plain",
        body: slackEvent({ type: "message", channel_type: "im" }),
        contentType: "text/plain",
        status: 400,
      },
      {
        name: "a form whose payload is a list",
        body: "payload=%5B%5D",
        contentType: "application/x-www-form-urlencoded",
        status: 400,
      },
      // An envelope type Antler does not handle (Slack adds some, e.g. app_rate_limited) is acknowledged.
      { name: "an unknown envelope type", body: '{"type":"x"}', status: 200 },
      { name: "an event_callback without an event", body: '{"type":"event_callback","event_id":"Ev1"}', status: 400 },
      { name: "an event that is null", body: '{"type":"event_callback","event_id":"Ev2","event":null}', status: 400 },
      { name: "a DM whose text is a list", body: slackEvent({ type: "message", channel_type: "im", text: [] }), status: 400 },
      {
        name: "a mention whose channel is an object",
        body: slackEvent({ type: "app_mention", text: "hi", channel: {} }),
        status: 400,
      },
      { name: "a click without actions", body: slackForm({ type: "block_actions", user: { id: "U1" } }), ...FORM, status: 400 },
      {
        name: "a click whose actions hold a number",
        body: slackForm({ type: "block_actions", user: { id: "U1" }, actions: [5] }),
        ...FORM,
        status: 400,
      },
      { name: "a shortcut without a user", body: slackForm({ type: "shortcut", callback_id: "x" }), ...FORM, status: 400 },
    ];
    await expectNoRun(g, cases, (c) => post(c));
    expect((await post({ name: "unsigned oversized", body: OVERSIZED, status: 413 }, false)).status).toBe(413);
    expect((await post({ name: "unsigned junk", body: "{}", status: 401 }, false)).status).toBe(401);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);

    g.model.enqueue({ text: "still here" });
    await fake.dm("a real message");
    expect(fake.deliveries.at(-1)?.status).toBe(200);
    await eventually(() => g.model.requests.length === 1, 10_000, "the run of the good message");
  });

  it("Telegram webhook: bodies that are not one Update get 400 before Telegraf sees them", async () => {
    const driver = await TelegramDriver.start({ mode: "webhook" });
    closeFake = () => driver.close();
    const port = await freePort();
    const g = await boot({ telegram: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) }, port);
    const post = (c: BadCase) =>
      fetch(`${g.url}${WEBHOOK_PATH}`, {
        method: "POST",
        headers: { "content-type": c.contentType ?? "application/json", "x-telegram-bot-api-secret-token": WEBHOOK_SECRET },
        body: c.body,
      });
    const message = {
      message_id: 1,
      from: { ...ALICE, is_bot: false },
      chat: { id: ALICE.id, type: "private" },
      date: 1,
      text: "x",
    };
    const cases: BadCase[] = [
      ...COMMON,
      { name: "an object without update_id", body: '{"type":"x"}', status: 400 },
      { name: "a message that is a number", body: '{"update_id":1,"message":5}', status: 400 },
      {
        name: "a message without a chat",
        body: JSON.stringify({ update_id: 2, message: { ...message, chat: {} } }),
        status: 400,
      },
      {
        name: "entities that are not a list",
        body: JSON.stringify({ update_id: 3, message: { ...message, entities: 7 } }),
        status: 400,
      },
      { name: "a click without a sender", body: '{"update_id":4,"callback_query":{"id":"q","data":"x"}}', status: 400 },
    ];
    await expectNoRun(g, cases, post);

    g.model.enqueue({ text: "still here" });
    await driver.userSays("a real message");
    await eventually(() => g.model.requests.length === 1, 10_000, "the run of the good message");
  });

  it("Feishu webhook: junk outside or inside the encryption gets 400/401, never 500", async () => {
    const { fake, g } = await feishuWebhook("input-encrypt-key", "input-vtoken");
    const o = fake.options;
    /** Encrypts and signs `inner` as Feishu would: an authentic request with this content. */
    const sealed = (inner: string) => JSON.stringify({ encrypt: encryptPayload(o.encryptKey as string, inner) });
    const post = (c: BadCase) => {
      const ts = String(Math.floor(Date.now() / 1000));
      return fetch(fake.webhookTarget as string, {
        method: "POST",
        headers: {
          "content-type": c.contentType ?? "application/json",
          "x-lark-request-timestamp": ts,
          "x-lark-request-nonce": "n0",
          "x-lark-signature": signature(ts, "n0", o.encryptKey as string, c.body),
        },
        body: c.body,
      });
    };
    const token = o.verificationToken;
    const feishuMessage = {
      message_id: "om_1",
      chat_id: DM_CHAT,
      chat_type: "p2p",
      message_type: "text",
      content: '{"text":"hi"}',
    };
    const cases: BadCase[] = [
      ...COMMON,
      { name: "encrypt that is not a string", body: '{"encrypt":5}', status: 400 },
      { name: "sealed null", body: sealed("null"), status: 400 },
      { name: "sealed junk text", body: sealed("not json"), status: 400 },
      { name: "sealed object without a token", body: sealed('{"type":"x"}'), status: 401 },
      { name: "sealed event without a header", body: sealed(JSON.stringify({ schema: "2.0", token })), status: 400 },
      {
        name: "sealed event without event_id",
        body: sealed(JSON.stringify({ schema: "2.0", header: { token, event_type: "im.message.receive_v1" }, event: {} })),
        status: 400,
      },
      {
        name: "sealed message whose mentions are a number",
        body: sealed(JSON.stringify(fake.envelope("im.message.receive_v1", { message: { ...feishuMessage, mentions: 5 } }))),
        status: 400,
      },
      {
        name: "sealed message whose content is null",
        body: sealed(JSON.stringify(fake.envelope("im.message.receive_v1", { message: { ...feishuMessage, content: "null" } }))),
        status: 400,
      },
      {
        name: "sealed click whose context is a string",
        body: sealed(JSON.stringify(fake.envelope("card.action.trigger", { operator: { open_id: "ou_x" }, context: "x" }))),
        status: 400,
      },
      {
        name: "sealed event whose event is not an object",
        body: sealed(
          JSON.stringify({ schema: "2.0", header: { token, event_id: "e1", event_type: "im.message.receive_v1" }, event: 5 }),
        ),
        status: 400,
      },
    ];
    await expectNoRun(g, cases, post);

    g.model.enqueue({ text: "still here" });
    expect((await fake.userSays({ text: "a real message" })).webhook?.status).toBe(200);
    await eventually(() => g.model.requests.length === 1, 10_000, "the run of the good message");
  });
});

/** A gateway with Feishu in webhook mode, and its fake; without `encryptKey` events are plain and unsigned. */
async function feishuWebhook(encryptKey: string | undefined, verificationToken: string) {
  const fake = await new FakeFeishu({ ...(encryptKey ? { encryptKey } : {}), verificationToken }).start();
  closeFake = () => fake.close();
  fake.via = "webhook";
  const port = await freePort();
  fake.webhookTarget = `http://127.0.0.1:${port}/webhooks/feishu`;
  const o = fake.options;
  const channel = { enabled: true, mode: "webhook", app_id: o.appId, app_secret: o.appSecret, domain: fake.url };
  const keys = { ...(o.encryptKey ? { encrypt_key: o.encryptKey } : {}), verification_token: o.verificationToken };
  const g = await boot({ feishu: { ...channel, ...keys } }, port);
  return { fake, g };
}

describe("feishu replay window", () => {
  const DAY = 24 * 3600_000;

  it("refuses a signed event whose X-Lark-Request-Timestamp is 3 days old, accepts a fresh one", async () => {
    const { fake, g } = await feishuWebhook("replay-encrypt-key", "replay-vtoken");

    const threeDaysAgo = Math.floor((Date.now() - 3 * DAY) / 1000);
    const stale = await fake.userSays(
      { text: "from three days ago", createdAt: Date.now() - 3 * DAY },
      { timestamp: threeDaysAgo },
    );
    expect(stale.webhook?.status).toBe(401);
    expect(stale.webhook?.body).toMatchObject({ msg: expect.stringMatching(/more than 5 minutes off/) });
    // The same signed request six minutes late is a replay too; four minutes is within the window.
    const late = await fake.userSays({ text: "six minutes late" }, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(late.webhook?.status).toBe(401);
    expect(g.model.requests).toHaveLength(0);
    expect(await g.gateway.bindingStore?.unfinished()).toEqual([]);

    g.model.enqueue({ text: "fresh answer" });
    const fresh = await fake.userSays({ text: "fresh" }, { timestamp: Math.floor(Date.now() / 1000) - 4 * 60 });
    expect(fresh.webhook?.status).toBe(200);
    await eventually(() => g.model.requests.length === 1, 10_000, "the run of the fresh event");
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  });

  it("without an encrypt key, judges by header.create_time: 3 days old is refused, a 2-hour-old redelivery is not", async () => {
    const { fake, g } = await feishuWebhook(undefined, "plain-vtoken");

    const stale = await fake.userSays({ text: "from three days ago", createdAt: Date.now() - 3 * DAY });
    expect(stale.webhook?.status).toBe(401);
    const future = await fake.userSays({ text: "from the future", createdAt: Date.now() + 3_600_000 });
    expect(future.webhook?.status).toBe(401);
    expect(g.model.requests).toHaveLength(0);

    g.model.enqueue({ text: "late but fine" });
    const retried = await fake.userSays({ text: "redelivered two hours on", createdAt: Date.now() - 2 * 3_600_000 });
    expect(retried.webhook?.status).toBe(200);
    await eventually(() => g.model.requests.length === 1, 10_000, "the run of the redelivered event");
  });
});
