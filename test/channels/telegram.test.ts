import { afterEach, describe, expect, it } from "vitest";
import { TelegramChannel, TelegramChannelConfig } from "../../src/channels/telegram/index.js";
import type { ConversationRef } from "../../src/channels/types.js";
import {
  ChannelError,
  NotModifiedError,
  PlatformAuthError,
  PlatformNotFoundError,
  PlatformRateLimitError,
} from "../../src/errors.js";
import { silentLogger } from "../../src/log/logger.js";
import { alice, bob, FORUM, GROUP, type Rig, startRig, waitFor } from "../fakes/telegram/rig.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const BOT = "antler_test_bot";

function dmRef(r: Rig): ConversationRef {
  return { channel: "telegram", key: `telegram:${r.fake.bot.id}:${alice.id}`, chatId: String(alice.id), chatType: "direct" };
}

describe("telegram inbound (polling)", () => {
  it("turns a DM into a message of the chat's conversation, with the update_id as event id", async () => {
    rig = await startRig();
    const update = rig.fake.dm(alice, "hello there");
    const [msg] = await waitFor(() => rig!.inbox.length > 0 && rig!.inbox, 5000, "the DM");
    expect(msg).toMatchObject({
      channel: "telegram",
      eventId: String(update.update_id),
      text: "hello there",
      mentioned: true,
      user: { id: String(alice.id), name: "Alice" },
      ref: { key: `telegram:123456:${alice.id}`, chatId: String(alice.id), chatType: "direct" },
    });
    expect(msg!.fromBot).toBeUndefined();
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true, mode: "polling" });
  });

  it("hands a message without text (a sticker) to the core with empty text", async () => {
    rig = await startRig();
    rig.fake.sticker(alice);
    const [msg] = await waitFor(() => rig!.inbox.length > 0 && rig!.inbox, 5000, "the sticker");
    expect(msg).toMatchObject({ text: "", mentioned: true, ref: { chatType: "direct" } });
  });

  it("reports group mentions truthfully and strips them", async () => {
    rig = await startRig();
    rig.fake.say(GROUP, alice, "just chatting among ourselves");
    rig.fake.say(GROUP, alice, `@${BOT} what is the weather?`);
    rig.fake.say(GROUP, bob, `/new@${BOT}`);
    rig.fake.say(GROUP, bob, "/status@some_other_bot");
    await waitFor(() => rig!.inbox.length === 4 && rig!.inbox, 5000, "four group messages");
    const [plain, mention, command, other] = rig.inbox;
    expect(plain).toMatchObject({ mentioned: false, text: "just chatting among ourselves" });
    expect(mention).toMatchObject({ mentioned: true, text: "what is the weather?" });
    expect(command).toMatchObject({ mentioned: true, text: "/new" });
    expect(other).toMatchObject({ mentioned: false, text: "/status@some_other_bot" });
    for (const m of rig.inbox) {
      expect(m.ref).toMatchObject({ key: `telegram:123456:${GROUP.id}`, chatType: "group", chatId: String(GROUP.id) });
    }
    expect(mention!.ref.replyToId).toBeDefined();
  });

  it("counts a reply to the bot as addressed, and a mention in the middle leaves one space", async () => {
    rig = await startRig();
    const sent = await rig.channel
      .send({ ...dmRef(rig), chatId: String(GROUP.id), chatType: "group" }, { text: "x" })
      .catch(() => undefined);
    expect(sent).toBeUndefined(); // the fake does not know the group yet: "chat not found"
    rig.fake.say(GROUP, alice, "hi");
    await waitFor(() => rig!.inbox.length === 1, 5000, "first message");
    const botMsg = await rig.channel.send(rig.inbox[0]!.ref, { text: "Hello, group." });
    rig.fake.say(GROUP, bob, "and what about tomorrow?", { replyTo: Number(botMsg.id) });
    rig.fake.say(GROUP, bob, `thanks @${BOT} for that`);
    await waitFor(() => rig!.inbox.length === 3, 5000, "the reply and the inline mention");
    expect(rig.inbox[1]).toMatchObject({ mentioned: true, text: "and what about tomorrow?" });
    expect(rig.inbox[2]).toMatchObject({ mentioned: true, text: "thanks for that" });
  });

  it("keys forum topics separately and posts into the topic", async () => {
    rig = await startRig();
    rig.fake.say(FORUM, alice, `@${BOT} in topic seven`, { threadId: 7 });
    rig.fake.say(FORUM, alice, `@${BOT} in the general topic`);
    await waitFor(() => rig!.inbox.length === 2, 5000, "two forum messages");
    expect(rig.inbox[0]!.ref).toMatchObject({ key: `telegram:123456:${FORUM.id}:7`, threadId: "7" });
    expect(rig.inbox[1]!.ref.key).toBe(`telegram:123456:${FORUM.id}`);
    await rig.channel.send(rig.inbox[0]!.ref, { text: "answer in topic" });
    expect(rig.fake.botMessages(FORUM.id, 7).map((m) => m.text)).toEqual(["answer in topic"]);
  });

  it("passes other bots' messages on as fromBot", async () => {
    rig = await startRig();
    rig.fake.dm({ id: 999, first_name: "Robo", username: "robo_bot", is_bot: true }, "beep");
    const [msg] = await waitFor(() => rig!.inbox.length === 1 && rig!.inbox, 5000, "the bot message");
    expect(msg!.fromBot).toBe(true);
  });

  it("fetches an update again when the core failed to record it", async () => {
    rig = await startRig();
    let failures = 1;
    rig.sink = async (m) => {
      if (failures-- > 0) throw new Error("disk full");
      rig!.inbox.push(m);
    };
    const update = rig.fake.dm(alice, "keep me");
    // Telegram is reachable; it is the core that failed, and status says so.
    const lastError = await waitFor(() => rig!.channel.status().lastError, 5000, "the recorded failure");
    expect(lastError.message).toMatch(/not recorded.*disk full/);
    expect(lastError.message).not.toMatch(/getUpdates/);
    expect(rig.channel.status()).toMatchObject({ state: "degraded", connected: true });
    const [msg] = await waitFor(() => rig!.inbox.length === 1 && rig!.inbox, 8000, "the retried update");
    expect(msg!.eventId).toBe(String(update.update_id));
    expect(rig.fake.calls.filter((c) => c.method === "getUpdates").length).toBeGreaterThanOrEqual(2);
  });

  it("shows a failing getUpdates in status and recovers", async () => {
    rig = await startRig();
    rig.fake.inject({ method: "getUpdates", code: 502, description: "Bad Gateway", times: 1 });
    // Wake the current long poll so the next one hits the fault.
    rig.fake.dm(alice, "wake up");
    const lastError = await waitFor(() => rig!.channel.status().lastError, 5000, "a recorded poll error");
    expect(lastError.message).toMatch(/getUpdates: 502 Bad Gateway/);
    rig.fake.dm(alice, "after the outage");
    await waitFor(() => rig!.inbox.some((m) => m.text === "after the outage"), 8000, "delivery after recovery");
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true });
  });
});

describe("telegram outbound", () => {
  it("sends Markdown as Telegram HTML that the chat shows formatted", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await waitFor(() => rig!.inbox.length === 1, 5000, "hi");
    const handle = await rig.channel.send(dmRef(rig), { text: "Use **bold** and `a<b` & [docs](https://example.com)" });
    const [shown] = rig.fake.botMessages(alice.id);
    expect(shown!.text).toBe("Use bold and a<b & docs");
    expect(shown!.entities.map((e) => e.type)).toEqual(["bold", "code", "text_link"]);
    expect(handle).toMatchObject({ id: String(shown!.message_id), ref: { chatId: String(alice.id) } });
    const sendCall = rig.fake.calls.find((c) => c.method === "sendMessage");
    expect(sendCall!.params.parse_mode).toBe("HTML");
  });

  it("resends as plain text when Telegram rejects the HTML", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await waitFor(() => rig!.inbox.length === 1, 5000, "hi");
    rig.fake.inject({
      method: "sendMessage",
      code: 400,
      description: "Bad Request: can't parse entities: Unsupported start tag",
      times: 1,
    });
    await rig.channel.send(dmRef(rig), { text: "A **bold** claim" });
    const [shown] = rig.fake.botMessages(alice.id);
    expect(shown!.text).toBe("A bold claim");
    expect(shown!.entities).toEqual([]);
    const sends = rig.fake.calls.filter((c) => c.method === "sendMessage");
    expect(sends.map((c) => c.params.parse_mode)).toEqual(["HTML", undefined]);
  });

  it("maps Telegram's errors to typed errors", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await waitFor(() => rig!.inbox.length === 1, 5000, "hi");
    const ref = dmRef(rig);
    const handle = await rig.channel.send(ref, { text: "same" });
    await expect(rig.channel.edit(handle, { text: "same" })).rejects.toBeInstanceOf(NotModifiedError);
    await expect(rig.channel.edit({ ...handle, id: "9999" }, { text: "x" })).rejects.toBeInstanceOf(PlatformNotFoundError);
    const noChat = await rig.channel.send({ ...ref, chatId: "-1" }, { text: "x" }).catch((e) => e);
    expect(noChat).toBeInstanceOf(PlatformNotFoundError);
    const long = await rig.channel.send(ref, { text: "y".repeat(4097) }).catch((e) => e);
    expect(long).toBeInstanceOf(ChannelError);
    expect(String(long.message)).toMatch(/message is too long/);
    expect(rig.channel.status().lastError?.message).toMatch(/too long/);
    rig.fake.inject({ method: "editMessageText", code: 429, retryAfter: 2, times: 1 });
    const limited = await rig.channel.edit(handle, { text: "new" }).catch((e) => e);
    expect(limited).toBeInstanceOf(PlatformRateLimitError);
    expect((limited as PlatformRateLimitError).retryAfterMs).toBe(2000);
    // The fake holds Telegram's line: a call inside retry_after is refused again and recorded.
    await expect(rig.channel.edit(handle, { text: "too soon" })).rejects.toBeInstanceOf(PlatformRateLimitError);
    expect(rig.fake.earlyCalls).toHaveLength(1);
  });

  it("renders buttons as an inline keyboard and decodes a click", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await waitFor(() => rig!.inbox.length === 1, 5000, "hi");
    const questionId = "q-7f3a:9c21.x";
    const buttons = [
      { id: "0", label: "Red" },
      { id: "b:1", label: "Blue" },
    ];
    const handle = await rig.channel.send(dmRef(rig), { text: "Which colour?", buttons, questionId });
    const shown = rig.fake.botMessages(alice.id)[0]!;
    expect(shown.keyboard.flat().map((b) => b.text)).toEqual(["Red", "Blue"]);
    const update = rig.fake.click(alice.id, alice, "Blue");
    const click = await waitFor(() => rig!.inbox.find((m) => m.action), 5000, "the click");
    expect(click).toMatchObject({
      eventId: String(update.update_id),
      text: "",
      mentioned: true,
      user: { id: String(alice.id) },
      action: { questionId, buttonId: "b:1", messageId: handle.id },
      ref: { key: dmRef(rig).key },
    });
    const queryId = (update.callback_query as { id: string }).id;
    await waitFor(() => rig!.fake.callback(queryId)?.answeredAt, 5000, "answerCallbackQuery");
    // An edit without new buttons keeps them; an empty list removes them.
    await rig.channel.edit(handle, { text: "Which colour? (still open)" });
    expect(rig.fake.botMessages(alice.id)[0]!.keyboard.flat()).toHaveLength(2);
    await rig.channel.edit(handle, { text: "Which colour? **Blue**", buttons: [] });
    expect(rig.fake.botMessages(alice.id)[0]).toMatchObject({ text: "Which colour? Blue", keyboard: [] });
  });

  it("refuses a click from a user outside allowed_users with a toast", async () => {
    rig = await startRig({ allowed_users: [String(alice.id)] });
    rig.fake.say(GROUP, alice, `@${BOT} hi`);
    await waitFor(() => rig!.inbox.length === 1, 5000, "hi");
    await rig.channel.send(rig.inbox[0]!.ref, { text: "Pick", buttons: [{ id: "y", label: "Yes" }], questionId: "q1" });
    const update = rig.fake.click(GROUP.id, bob, "Yes");
    const queryId = (update.callback_query as { id: string }).id;
    const record = await waitFor(
      () => (rig!.fake.callback(queryId)?.answeredAt ? rig!.fake.callback(queryId) : undefined),
      5000,
      "the toast",
    );
    expect(record.text).toMatch(/not allowed/);
    rig.fake.click(GROUP.id, alice, "Yes");
    await waitFor(() => rig!.inbox.some((m) => m.action), 5000, "alice's click");
    expect(rig.inbox.filter((m) => m.action).map((m) => m.user.id)).toEqual([String(alice.id)]);
  });

  it("holds a click for the core: its refusal shows as an alert to the clicker alone", async () => {
    rig = await startRig();
    rig.fake.say(GROUP, alice, `@${BOT} hi`);
    await waitFor(() => rig!.inbox.length === 1, 5000, "hi");
    await rig.channel.send(rig.inbox[0]!.ref, { text: "Pick", buttons: [{ id: "y", label: "Yes" }], questionId: "q1" });
    rig.sink = async (m) => {
      rig!.inbox.push(m);
      if (m.action) setImmediate(() => void rig!.channel.answerAction(m, "Only Alice can answer this question."));
    };
    const update = rig.fake.click(GROUP.id, bob, "Yes");
    const queryId = (update.callback_query as { id: string }).id;
    const answered = () => (rig!.fake.callback(queryId)?.answeredAt ? rig!.fake.callback(queryId) : undefined);
    const record = await waitFor(answered, 1000, "alert");
    expect(record).toMatchObject({ text: "Only Alice can answer this question.", showAlert: true });
    expect(rig.fake.clickAnswersSeenBy(bob.id)).toEqual(["Only Alice can answer this question."]);
    expect(rig.fake.clickAnswersSeenBy(alice.id)).toEqual([]);
    // The keyboard stays for the asker.
    expect(
      rig.fake
        .botMessages(GROUP.id)
        .at(-1)
        ?.keyboard.flat()
        .map((b) => b.text),
    ).toEqual(["Yes"]);
  });

  it("answers a held click by itself when the core does not, and then reports it too late", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await waitFor(() => rig!.inbox.length === 1, 5000, "hi");
    await rig.channel.send(dmRef(rig), { text: "Pick", buttons: [{ id: "y", label: "Yes" }], questionId: "q1" });
    rig.sink = async (m) => {
      rig!.inbox.push(m);
    };
    const update = rig.fake.click(alice.id, alice, "Yes");
    const queryId = (update.callback_query as { id: string }).id;
    const click = await waitFor(() => rig!.inbox.find((m) => m.action), 5000, "the click");
    expect(click.action?.callbackId).toBe(queryId);
    const answered = () => (rig!.fake.callback(queryId)?.answeredAt ? rig!.fake.callback(queryId) : undefined);
    const record = await waitFor(answered, 5000, "answer");
    expect(record.answeredAt! - record.at).toBeGreaterThanOrEqual(2000);
    expect(record.text).toBeUndefined();
    expect(await rig.channel.answerAction(click, "late")).toBe(false);
  });

  it("refuses buttons whose callback_data would pass 64 bytes", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await waitFor(() => rig!.inbox.length === 1, 5000, "hi");
    const err = await rig.channel
      .send(dmRef(rig), { text: "Q", buttons: [{ id: "x".repeat(40), label: "X" }], questionId: "q".repeat(30) })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect(err.code).toBe("content_rejected");
  });

  it("shows typing, and a failing sendChatAction is harmless", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await waitFor(() => rig!.inbox.length === 1, 5000, "hi");
    await rig.channel.typing(dmRef(rig));
    expect(rig.fake.chat(alice.id)!.typing).toHaveLength(1);
    rig.fake.inject({ method: "sendChatAction", code: 500, times: 1 });
    await expect(rig.channel.typing(dmRef(rig))).resolves.toBeUndefined();
  });

  it("paces edits at 1000 ms in private chats and 3000 ms in groups unless configured", async () => {
    rig = await startRig({}, { start: false });
    const ref = dmRef(rig);
    expect(rig.channel.editIntervalMs(ref)).toBe(1000);
    expect(rig.channel.editIntervalMs({ ...ref, chatType: "group" })).toBe(3000);
    expect(rig.channel.capabilities).toMatchObject({
      maxTextLength: 4096,
      markdown: expect.objectContaining({ name: "telegram-html" }),
      buttons: true,
      edits: true,
    });
    const custom = new TelegramChannel({
      name: "telegram",
      config: TelegramChannelConfig.parse({ edit_interval_ms: "250" }),
      logger: silentLogger(),
      http: rig.http.mount("telegram"),
      baseDir: ".",
    });
    expect(custom.editIntervalMs({ ...ref, chatType: "group" })).toBe(250);
    expect(custom.capabilities.minEditIntervalMs).toBe(250);
  });
});

describe("telegram credentials and doctor", () => {
  it("check() names the bot; a rejected token is an auth error", async () => {
    rig = await startRig({}, { start: false });
    await expect(rig.channel.check()).resolves.toMatch(/^@antler_test_bot \(bot id 123456/);
    const wrong = new TelegramChannel({
      name: "telegram",
      config: TelegramChannelConfig.parse({ bot_token: "1:wrong", api_base: rig.fake.apiRoot }),
      logger: silentLogger(),
      http: rig.http.mount("telegram"),
      baseDir: ".",
    });
    await expect(wrong.check()).rejects.toBeInstanceOf(PlatformAuthError);
    const err = await wrong.start(async () => {}).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformAuthError);
    expect(wrong.status()).toMatchObject({ state: "failed", connected: false });
    expect(wrong.status().lastError?.message).toMatch(/bot_token/);
    expect(JSON.stringify(wrong.status())).not.toContain("1:wrong");
  });

  it("a missing token or webhook secret names the key and the fix", async () => {
    rig = await startRig({}, { start: false });
    const make = (config: Record<string, unknown>) =>
      new TelegramChannel({
        name: "telegram",
        config: TelegramChannelConfig.parse(config),
        logger: silentLogger(),
        http: rig!.http.mount("telegram"),
        baseDir: ".",
      });
    await expect(make({}).start(async () => {})).rejects.toThrow(
      "channels.telegram.bot_token is required: set TELEGRAM_BOT_TOKEN or write it in config.yaml",
    );
    await expect(make({}).check()).rejects.toThrow(/bot_token is required/);
    await expect(
      make({ bot_token: rig.fake.token, mode: "webhook", webhook_url: "https://bot.example.com/tg" }).start(async () => {}),
    ).rejects.toThrow(/channels\.telegram\.webhook_secret is required/);
    expect(() => TelegramChannelConfig.parse({ webhook_secret: "has spaces!" })).toThrow(/secret_token/);
    expect(() => TelegramChannelConfig.parse({ unknown_key: 1 })).toThrow();
  });
});

describe("telegram webhook mode", () => {
  const SECRET = "s3cret_token-abc";

  async function webhookRig(urlSuffix = ""): Promise<Rig> {
    const r = await startRig({}, { start: false, webhookRetryMs: 50 });
    const channel = new TelegramChannel({
      name: "telegram",
      config: TelegramChannelConfig.parse({
        bot_token: r.fake.token,
        api_base: r.fake.apiRoot,
        mode: "webhook",
        webhook_url: `${r.baseUrl}/hooks/telegram${urlSuffix}`,
        webhook_secret: SECRET,
      }),
      logger: silentLogger(),
      http: r.http.mount("telegram"),
      baseDir: ".",
    });
    r.channel = channel;
    r.close = async () => {
      await channel.stop();
      await r.http.close();
      await r.fake.close();
    };
    await channel.start((m) => r.sink(m));
    return r;
  }

  it("registers the webhook with its secret and receives updates through Antler's server", async () => {
    rig = await webhookRig();
    const setCall = rig.fake.calls.find((c) => c.method === "setWebhook");
    expect(setCall!.params).toMatchObject({ url: `${rig.baseUrl}/hooks/telegram`, secret_token: SECRET });
    expect(rig.fake.calls.some((c) => c.method === "getUpdates")).toBe(false);
    const update = rig.fake.dm(alice, "via webhook");
    const [msg] = await waitFor(() => rig!.inbox.length === 1 && rig!.inbox, 5000, "the webhook update");
    expect(msg).toMatchObject({ eventId: String(update.update_id), text: "via webhook" });
    await waitFor(() => rig!.fake.updates.deliveries.some((d) => d.status === 200), 2000, "a 200 to Telegram");
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true, mode: "webhook" });
  });

  it("answers 403 to a wrong or missing secret and hands nothing on", async () => {
    rig = await webhookRig();
    const update = {
      update_id: 42,
      message: { message_id: 1, from: alice, chat: { id: alice.id, type: "private" }, date: 1, text: "x" },
    };
    expect(await rig.fake.postToWebhook(update, "wrong")).toBe(403);
    expect(await rig.fake.postToWebhook(update, undefined)).toBe(403);
    expect(rig.inbox).toEqual([]);
    expect(await rig.fake.postToWebhook(update, SECRET)).toBe(200);
    expect(rig.inbox).toHaveLength(1);
  });

  it("answers 500 when the core could not record an update, so Telegram delivers it again", async () => {
    rig = await webhookRig();
    let failures = 1;
    rig.sink = async (m) => {
      if (failures-- > 0) throw new Error("disk full");
      rig!.inbox.push(m);
    };
    const update = rig.fake.dm(alice, "retry me");
    await waitFor(() => rig!.inbox.length === 1, 5000, "the redelivered update");
    // The sink resolves just before the 200 goes out: wait for Telegram to have seen it.
    const attempts = () => rig!.fake.updates.deliveries.filter((d) => d.update_id === update.update_id).map((d) => d.status);
    await waitFor(() => attempts().length === 2, 2000, "the second answer");
    expect(attempts()).toEqual([500, 200]);
  });

  it("accepts updates at a webhook_url that carries a query string", async () => {
    rig = await webhookRig("?source=telegram");
    const update = rig.fake.dm(alice, "with a query");
    await waitFor(() => rig!.inbox.length === 1, 5000, "the update at the URL with a query");
    // The sink resolves just before the 200 goes out: wait for Telegram to have seen it.
    const attempts = () => rig!.fake.updates.deliveries.filter((d) => d.update_id === update.update_id).map((d) => d.status);
    await waitFor(() => attempts().length > 0, 2000, "Telegram's record of the delivery");
    expect(attempts()).toEqual([200]);
    const wrong = { ...update, update_id: update.update_id + 1000 };
    expect(await rig.fake.postToWebhook(wrong, "wrong")).toBe(403);
  });

  it("takes its route down on stop", async () => {
    rig = await webhookRig();
    await rig.channel.stop();
    const res = await fetch(`${rig.baseUrl}/hooks/telegram`, { method: "POST", body: "{}" });
    // The route is down: 503 + Retry-After (Telegram delivers again), not handled.
    expect(res.status).toBe(503);
    expect(rig.channel.status()).toMatchObject({ state: "stopped", connected: false });
  });
});

describe("telegram lifecycle", () => {
  it("starts again after stop and keeps receiving (polling)", async () => {
    rig = await startRig();
    const r = rig;
    r.fake.dm(alice, "one");
    await waitFor(() => r.inbox.length === 1, 5000, "the first DM");
    await r.channel.stop();
    expect(r.channel.status()).toMatchObject({ state: "stopped", connected: false });
    await r.channel.start((m) => r.sink(m));
    expect(r.channel.status()).toMatchObject({ state: "running", connected: true });
    r.fake.dm(alice, "two");
    await waitFor(() => r.inbox.some((m) => m.text === "two"), 5000, "the DM after the restart");
  });

  it("a stop() during start() leaves nothing polling, and a later start() runs once", async () => {
    rig = await startRig({}, { start: false });
    const r = rig;
    const first = r.channel.start((m) => r.sink(m)).catch((e: unknown) => e);
    await r.channel.stop();
    expect(await first).toMatchObject({ code: "stopped" });
    expect(r.channel.status()).toMatchObject({ state: "stopped", connected: false });
    r.fake.dm(alice, "while stopped");
    await new Promise((res) => setTimeout(res, 300));
    expect(r.fake.calls.filter((c) => c.method === "getUpdates")).toHaveLength(0);
    expect(r.inbox).toHaveLength(0);

    const pending = r.channel.start((m) => r.sink(m)).catch((e: unknown) => e);
    await r.channel.stop();
    await r.channel.start((m) => r.sink(m));
    expect(await pending).toMatchObject({ code: "stopped" });
    expect(r.channel.status()).toMatchObject({ state: "running", connected: true });
    await waitFor(() => r.inbox.length === 1, 5000, "the DM sent while stopped");
    await new Promise((res) => setTimeout(res, 200));
    expect(r.inbox.map((m) => m.text)).toEqual(["while stopped"]);
  });

  it("never shows the bot token in errors or status, even when a proxy answers HTML", async () => {
    rig = await startRig({}, { start: false });
    const r = rig;
    // A wrong api_root (or a proxy) answering an HTML 404 page: node-fetch's JSON error names the URL.
    r.fake.inject({ method: "getMe", code: 404, rawBody: "<html><body>Not Found</body></html>", times: 2 });
    const err = (await r.channel.start(async () => {}).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(ChannelError);
    expect(err.message).toMatch(/getMe/);
    const doctor = (await r.channel.check().catch((e: unknown) => e)) as Error;
    for (const text of [err.message, String((err.cause as Error).message), doctor.message, JSON.stringify(r.channel.status())]) {
      expect(text).not.toContain(r.fake.token);
      expect(text).not.toContain(r.fake.token.split(":")[1]);
    }
  });
});
