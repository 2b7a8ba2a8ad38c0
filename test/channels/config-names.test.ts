/**
 * Names that changed: each old key and value still works through the registry (with a warning
 * naming the new one), each old webhook path still takes events beside `/webhooks/<name>`, and a
 * second bot of one platform (`use: slack`) gets a route, state and conversation keys of its own.
 */
import { afterEach, describe, expect, it } from "vitest";
import { instantiate } from "../../src/channels/registry.js";
import type { Channel, InboundMessage } from "../../src/channels/types.js";
import { ChannelSection } from "../../src/config/schema.js";
import { ConfigError } from "../../src/errors.js";
import { createLogger } from "../../src/log/logger.js";
import { HttpServer } from "../../src/server/http.js";
import { eventually, testLogger } from "../contract/gateway.js";
import { FakeDingTalk } from "../fakes/dingtalk/index.js";
import { FakeFeishu } from "../fakes/feishu/index.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { FakeTelegram } from "../fakes/telegram/index.js";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function world() {
  const lines: string[] = [];
  const logger = createLogger({ level: "warn", format: "json", destination: { write: (l: string) => void lines.push(l) } });
  const http = new HttpServer({ host: "127.0.0.1", port: 0, logger: testLogger() });
  const { port } = await http.listen();
  cleanup.push(() => http.close());
  const inbox: InboundMessage[] = [];
  const load = async (name: string, section: Record<string, unknown>): Promise<Channel> => {
    const channel = await instantiate(name, ChannelSection.parse({ enabled: true, ...section }), { baseDir: ".", logger, http });
    cleanup.push(() => channel.stop());
    return channel;
  };
  const start = (channel: Channel) => channel.start(async (m) => void inbox.push(m));
  const warnings = () => lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
  return { url: `http://127.0.0.1:${port}`, load, start, inbox, warnings };
}

describe("old config names", () => {
  it("slack: api_url and mode: http still work, with warnings; /slack/events and /webhooks/slack both take events", async () => {
    const w = await world();
    const fake = await FakeSlack.start({ mode: "webhook" });
    cleanup.push(() => fake.close());
    const slack = await w.load("slack", {
      mode: "http",
      api_url: fake.apiUrl,
      bot_token: fake.botToken,
      signing_secret: fake.signingSecret,
    });
    expect(w.warnings()).toEqual([
      "channels.slack.api_url is deprecated: rename it to api_base",
      "channels.slack.mode: http is deprecated: write mode: webhook",
    ]);
    await w.start(slack);
    expect(slack.status()).toMatchObject({ state: "running", mode: "webhook" });
    for (const path of ["/slack/events", "/webhooks/slack"]) {
      fake.eventsUrl = `${w.url}${path}`;
      await fake.dm(`via ${path}`);
    }
    expect(w.inbox.map((m) => m.text)).toEqual(["via /slack/events", "via /webhooks/slack"]);
  });

  it("telegram: api_root still works, with a warning", async () => {
    const w = await world();
    const fake = await FakeTelegram.start();
    cleanup.push(() => fake.close());
    const telegram = await w.load("telegram", { bot_token: fake.token, api_root: fake.apiRoot });
    expect(w.warnings()).toEqual(["channels.telegram.api_root is deprecated: rename it to api_base"]);
    await w.start(telegram);
    expect(telegram.status()).toMatchObject({ state: "running", mode: "polling" });
  });

  it("telegram: the path of webhook_url stays mounted beside /webhooks/<name>", async () => {
    const w = await world();
    const fake = await FakeTelegram.start();
    cleanup.push(() => fake.close());
    const config = { bot_token: fake.token, api_base: fake.apiRoot, mode: "webhook", webhook_secret: "s3cret" };
    const telegram = await w.load("tg", { use: "telegram", ...config, webhook_url: `${w.url}/hooks/tg` });
    await w.start(telegram);
    const secretOk = async (path: string) =>
      fetch(`${w.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "s3cret" },
        body: JSON.stringify({ update_id: path.length, message: dmFrom(path) }),
      });
    expect((await secretOk("/hooks/tg")).status).toBe(200);
    expect((await secretOk("/webhooks/tg")).status).toBe(200);
    await eventually(() => w.inbox.length === 2, 5000, "both updates");
  });

  it("feishu: domain and stream_interval_ms still work, with warnings", async () => {
    const w = await world();
    const fake = await new FakeFeishu().start();
    cleanup.push(() => fake.close());
    const o = fake.options;
    const feishu = await w.load("feishu", {
      app_id: o.appId,
      app_secret: o.appSecret,
      domain: fake.url,
      stream_interval_ms: 400,
    });
    expect(w.warnings()).toEqual([
      "channels.feishu.domain is deprecated: rename it to api_base",
      "channels.feishu.stream_interval_ms is deprecated: rename it to edit_interval_ms",
    ]);
    expect(feishu.capabilities.minEditIntervalMs).toBe(400);
    await w.start(feishu);
    expect(feishu.status()).toMatchObject({ state: "running", mode: "websocket" });
  });

  it("dingtalk: mode: http and stream_interval_ms still work; /dingtalk/<name>/callback and callback_path take callbacks", async () => {
    const w = await world();
    const fake = await FakeDingTalk.start();
    cleanup.push(() => fake.close());
    const dingtalk = await w.load("dingtalk", {
      mode: "http",
      stream_interval_ms: 700,
      client_id: fake.clientId,
      client_secret: fake.clientSecret,
      api_base: fake.url,
      callback_path: "/robot/in",
    });
    expect(w.warnings()).toEqual([
      "channels.dingtalk.stream_interval_ms is deprecated: rename it to edit_interval_ms",
      "channels.dingtalk.mode: http is deprecated: write mode: webhook",
    ]);
    expect(dingtalk.capabilities.minEditIntervalMs).toBe(700);
    await w.start(dingtalk);
    expect(dingtalk.status()).toMatchObject({ state: "running", mode: "webhook" });
    for (const path of ["/dingtalk/dingtalk/callback", "/robot/in", "/webhooks/dingtalk"]) {
      fake.callbackUrl = `${w.url}${path}`;
      await fake.userSays(`via ${path}`);
    }
    expect(w.inbox.map((m) => m.text)).toEqual(["via /dingtalk/dingtalk/callback", "via /robot/in", "via /webhooks/dingtalk"]);
  });

  it("discord: session_scope: channel still works as chat, with a warning", async () => {
    const w = await world();
    await w.load("discord", { bot_token: "x", thread: false, session_scope: "channel" });
    expect(w.warnings()).toEqual(["channels.discord.session_scope: channel is deprecated: write session_scope: chat"]);
    const unknown = await w.load("discord", { bot_token: "x", session_scope: "server" }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ConfigError);
  });

  it("refuses an old key written beside its new one", async () => {
    const w = await world();
    const err = await w.load("slack", { api_url: "https://a.example/", api_base: "https://b.example/" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe("channels.slack.api_url: is the old name of api_base, which is set too: remove api_url");
  });
});

describe("several bots of one platform", () => {
  it("slack_two (use: slack) has its own route; stopping it leaves slack's routes up", async () => {
    const w = await world();
    const fakes = [await FakeSlack.start({ mode: "webhook" }), await FakeSlack.start({ mode: "webhook" })];
    cleanup.push(async () => void (await Promise.all(fakes.map((f) => f.close()))));
    const section = (fake: FakeSlack) => ({
      mode: "webhook",
      api_base: fake.apiUrl,
      bot_token: fake.botToken,
      signing_secret: fake.signingSecret,
    });
    const one = await w.load("slack", section(fakes[0]!));
    const two = await w.load("slack_two", { use: "slack", ...section(fakes[1]!) });
    await w.start(one);
    await w.start(two);
    fakes[0]!.eventsUrl = `${w.url}/webhooks/slack`;
    fakes[1]!.eventsUrl = `${w.url}/webhooks/slack_two`;
    await fakes[0]!.dm("to one");
    await fakes[1]!.dm("to two");
    expect(w.inbox.map((m) => [m.channel, m.text, m.ref.key.split(":")[0]])).toEqual([
      ["slack", "to one", "slack"],
      ["slack_two", "to two", "slack_two"],
    ]);
    await two.stop();
    expect(two.status().state).toBe("stopped");
    expect(one.status().state).toBe("running");
    // Its route is down: the server asks the platform to deliver again later (503), it does not run it.
    const gone = await fetch(`${w.url}/webhooks/slack_two`, { method: "POST", body: "{}" });
    expect(gone.status).toBe(503);
    await fakes[0]!.dm("still one");
    fakes[0]!.eventsUrl = `${w.url}/slack/events`;
    await fakes[0]!.dm("old path, still one");
    expect(w.inbox.slice(2).map((m) => m.text)).toEqual(["still one", "old path, still one"]);
  });

  it("a webhook path two channels want fails the second to start, naming both", async () => {
    const w = await world();
    const fake = await FakeDingTalk.start();
    cleanup.push(() => fake.close());
    const section = { mode: "webhook", client_id: fake.clientId, client_secret: fake.clientSecret, api_base: fake.url };
    const first = await w.load("ding_a", { use: "dingtalk", ...section, callback_path: "/robot" });
    const second = await w.load("ding_b", { use: "dingtalk", ...section, callback_path: "/robot" });
    await w.start(first);
    const err = (await w.start(second).catch((e: unknown) => e)) as Error;
    expect(err.message).toBe(
      'POST /robot is already mounted by channel "ding_a", so channel "ding_b" cannot mount it: give one of them another path',
    );
    expect(second.status()).toMatchObject({ state: "failed", reason: err.message });
    // The loser took nothing down: the winner still answers at both its paths.
    fake.callbackUrl = `${w.url}/robot`;
    await fake.userSays("to a");
    expect(w.inbox.map((m) => m.channel)).toEqual(["ding_a"]);
  });
});

function dmFrom(text: string) {
  return {
    message_id: text.length,
    from: { id: 7, is_bot: false, first_name: "Ann" },
    chat: { id: 7, type: "private" },
    date: Math.floor(Date.now() / 1000),
    text,
  };
}
