/**
 * The Slack adapter with real Bolt (Socket Mode) and the real web client against the fake Slack:
 * inbound translation, outbound calls, native streams, errors and status.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SlackChannelConfig } from "../../src/channels/slack/config.js";
import { SlackChannel } from "../../src/channels/slack/index.js";
import type { ConversationRef } from "../../src/channels/types.js";
import { ChannelError, PlatformAuthError, PlatformNotFoundError, PlatformRateLimitError } from "../../src/errors.js";
import { silentLogger } from "../../src/log/logger.js";
import { HttpServer } from "../../src/server/http.js";
import { eventually } from "../../src/testing/wait.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { type AdapterRig, adapterRig } from "../fakes/slack/rig.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let fake: FakeSlack;
let rig: AdapterRig;

beforeEach(async () => {
  fake = await FakeSlack.start({ mode: "socket" });
  rig = await adapterRig(fake);
  await rig.start();
});

afterEach(async () => {
  await rig?.stop();
  await fake?.close();
});

const threadRef = (thread: string): ConversationRef => ({
  channel: "slack",
  key: `slack:T0001:C0001:${thread}`,
  chatId: "C0001",
  threadId: thread,
  chatType: "group",
  extra: { team: "T0001", user: "U0001" },
});

describe("slack socket mode: inbound", () => {
  it("connects with the app token and reports it in status", () => {
    expect(fake.api.calls.find((c) => c.method === "apps.connections.open")?.token).toBe(fake.appToken);
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true, mode: "socket" });
  });

  it("turns a channel mention into a thread conversation and drops its duplicate message event", async () => {
    const ts = await fake.mention("what is &lt;html&gt;?");
    expect(rig.inbox).toHaveLength(1);
    const msg = rig.inbox[0]!;
    expect(msg).toMatchObject({
      channel: "slack",
      text: "what is <html>?",
      mentioned: true,
      user: { id: "U0001" },
      ref: { key: `slack:T0001:C0001:${ts}`, chatId: "C0001", threadId: ts, chatType: "group" },
    });
    expect(msg.eventId).toMatch(/^Ev/);
    // Both the app_mention and its twin message event were acked.
    expect(fake.deliveries.every((d) => d.ok)).toBe(true);
  });

  it("acks an envelope only after the core recorded the message", async () => {
    rig.onInbound = () => sleep(300);
    await fake.mention("slow core");
    const ack = fake.socket.acks.at(-2)!; // the app_mention's ack (the twin came after)
    const recorded = rig.recordedAt.get(rig.inbox[0]!.eventId)!;
    expect(ack.at).toBeGreaterThanOrEqual(recorded);
  });

  it("leaves an envelope unacked when the core fails to record it", async () => {
    rig.onInbound = async () => {
      throw new Error("disk full");
    };
    fake.socket.ackTimeoutMs = 500;
    const result = await fake.socket.deliver(
      "events_api",
      fake.envelope({ type: "app_mention", user: "U1", text: "<@UBOT> x", ts: "1.1", channel: "C0001" }),
    );
    expect(result.ok).toBe(false);
  });

  it("continues a mentioned thread without a new mention, and not an unknown one", async () => {
    const root = await fake.mention("start");
    await fake.say("and a follow-up", { threadTs: root });
    await fake.say("other thread", { threadTs: "1699999999.000001" });
    await fake.say("top level chatter");
    const [, followUp, other, top] = rig.inbox;
    expect(followUp).toMatchObject({
      text: "and a follow-up",
      mentioned: true,
      ref: { key: `slack:T0001:C0001:${root}`, threadId: root },
    });
    expect(other).toMatchObject({ mentioned: false, ref: { key: "slack:T0001:C0001:1699999999.000001" } });
    expect(top?.mentioned).toBe(false);
  });

  it("keys a DM by the DM channel, so the second DM continues the first", async () => {
    await fake.dm("hello");
    await fake.dm("again");
    expect(rig.inbox.map((m) => m.ref.key)).toEqual(["slack:T0001:D0001", "slack:T0001:D0001"]);
    expect(rig.inbox[0]).toMatchObject({ mentioned: true, ref: { chatType: "direct", chatId: "D0001" } });
    expect(rig.inbox[0]?.ref.threadId).toBeUndefined();
  });

  it("ignores bot messages, other bots, and edits", async () => {
    await fake.botSays("my own words");
    await fake.botSays("another bot", { botId: "BOTHER", channel: "C0001" });
    const ts = await fake.dm("original");
    await fake.userEdits("D0001", ts, "edited");
    expect(rig.inbox.map((m) => m.text)).toEqual(["original"]);
  });

  it("turns a button click into an action on the question's conversation", async () => {
    const root = await fake.mention("choose");
    const handle = await rig.channel.send(threadRef(root), {
      text: "Pick *one*",
      questionId: "q1",
      buttons: [
        { id: "0", label: "Red" },
        { id: "1", label: "Blue" },
      ],
    });
    const click = await fake.click("Blue");
    expect(click.ok).toBe(true);
    const action = rig.inbox.at(-1)!;
    expect(action).toMatchObject({
      text: "",
      action: { questionId: "q1", buttonId: "1", messageId: handle.id },
      ref: { key: `slack:T0001:C0001:${root}`, threadId: root },
      user: { id: "U0001" },
    });
  });
});

describe("slack socket mode: outbound", () => {
  it("posts mrkdwn in the thread and edits it", async () => {
    const handle = await rig.channel.send(threadRef("1700000000.000001"), { text: "**Hi** & [docs](https://x.y)" });
    expect(fake.calls("chat.postMessage").at(-1)).toMatchObject({
      channel: "C0001",
      thread_ts: "1700000000.000001",
      text: "*Hi* &amp; <https://x.y|docs>",
    });
    await rig.channel.edit(handle, { text: "**Hi** again" });
    const shown = fake.botMessages("C0001").at(-1)!;
    expect(shown.versions.map((v) => v.text)).toEqual(["*Hi* & docs", "*Hi* again"]);
  });

  it("shows buttons as Block Kit and removes them on an edit with buttons: []", async () => {
    const handle = await rig.channel.send(threadRef("1700000000.000001"), {
      text: "Which?",
      questionId: "q9",
      buttons: [
        { id: "a", label: "Alpha" },
        { id: "b", label: "Beta" },
      ],
    });
    const blocks = fake.calls("chat.postMessage").at(-1)?.blocks as Array<Record<string, unknown>>;
    const actions = blocks.find((b) => b.type === "actions") as { elements: Array<{ action_id: string }> };
    expect(actions.elements.map((e) => e.action_id)).toEqual(["antler:a", "antler:b"]);
    expect(fake.botMessages().at(-1)?.buttons).toEqual(["Alpha", "Beta"]);
    await rig.channel.edit(handle, { text: "Which? → Beta", buttons: [] });
    expect(fake.botMessages().at(-1)).toMatchObject({ text: "Which? → Beta", buttons: [] });
  });

  it("maps 429 to a rate-limit error with Retry-After, and missing messages to not-found", async () => {
    fake.api.rateLimitNext("chat.postMessage", 2);
    const err = await rig.channel.send(threadRef("1.1"), { text: "x" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformRateLimitError);
    expect((err as PlatformRateLimitError).retryAfterMs).toBe(2000);
    const missing = await rig.channel.edit({ id: "9.9", ref: threadRef("1.1") }, { text: "y" }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(PlatformNotFoundError);
    expect(rig.channel.status().lastError?.message).toMatch(/message_not_found/);
  });

  it("sets and clears the thinking status in threads, and skips it at DM top level", async () => {
    await rig.channel.typing(threadRef("1.5"));
    await rig.channel.typingDone(threadRef("1.5"));
    await rig.channel.typing({ channel: "slack", key: "slack:T0001:D0001", chatId: "D0001", chatType: "direct" });
    expect(fake.api.statuses.map((s) => [s.threadTs, s.status])).toEqual([
      ["1.5", "is thinking…"],
      ["1.5", ""],
    ]);
  });
});

describe("slack native streaming", () => {
  it("appends only the new text and stops with the exact final text", async () => {
    const stream = await rig.channel.startStream(threadRef("1.7"));
    expect(stream).toBeDefined();
    await stream!.update("Hello");
    await stream!.update("Hello wor");
    await stream!.update("Hello wor");
    await stream!.finish("Hello world!");
    expect(fake.calls("chat.appendStream").map((a) => a.markdown_text)).toEqual(["Hello", " wor"]);
    expect(fake.calls("chat.stopStream").at(-1)?.markdown_text).toBe("ld!");
    expect(fake.calls("chat.startStream").at(-1)).toMatchObject({
      thread_ts: "1.7",
      recipient_user_id: "U0001",
      recipient_team_id: "T0001",
    });
    const shown = fake.botMessages("C0001").at(-1)!;
    expect(shown).toMatchObject({ text: "Hello world!", streaming: false });
    expect(shown.versions.length).toBeGreaterThanOrEqual(3);
  });

  it("falls back to chat.update when the stream breaks mid-way, and ends exact", async () => {
    const stream = (await rig.channel.startStream(threadRef("1.8")))!;
    await stream.update("Part one.");
    fake.api.failNext("chat.appendStream", "streaming_state_conflict");
    await stream.update("Part one. Part two.");
    await stream.update("Part one. Part two. Part three.");
    await stream.finish("Part one. Part two. Part three. End.");
    const shown = fake.botMessages("C0001").at(-1)!;
    expect(shown.text).toBe("Part one. Part two. Part three. End.");
    expect(fake.calls("chat.update").length).toBeGreaterThanOrEqual(2);
  });

  it("gives rate limits back to the core and resends the right delta after", async () => {
    const stream = (await rig.channel.startStream(threadRef("1.9")))!;
    await stream.update("abc");
    fake.api.rateLimitNext("chat.appendStream", 1);
    await expect(stream.update("abcdef")).rejects.toBeInstanceOf(PlatformRateLimitError);
    await stream.update("abcdefgh");
    await stream.finish("abcdefgh");
    expect(fake.botMessages("C0001").at(-1)?.text).toBe("abcdefgh");
    // The 429'd call ("def") showed nothing; the next one carries everything since "abc".
    expect(fake.calls("chat.appendStream").map((a) => a.markdown_text)).toEqual(["abc", "def", "defgh"]);
  });

  it("finishes with chat.update after the stream expired", async () => {
    await rig.stop();
    await fake.close();
    fake = await FakeSlack.start({ mode: "socket", streamExpiryMs: 50 });
    rig = await adapterRig(fake);
    await rig.start();
    const stream = (await rig.channel.startStream(threadRef("2.1")))!;
    await stream.update("early");
    await sleep(80);
    await stream.finish("early and late");
    expect(fake.botMessages("C0001").at(-1)?.text).toBe("early and late");
  });

  it("does not stream without a thread or when switched off", async () => {
    expect(
      await rig.channel.startStream({ channel: "slack", key: "slack:T0001:D0001", chatId: "D0001", chatType: "direct" }),
    ).toBeUndefined();
    const off = await adapterRig(fake, { native_streaming: false });
    expect(await off.channel.startStream(threadRef("1.1"))).toBeUndefined();
    await off.http.close();
  });

  it("declines to stream when Slack refuses to start one", async () => {
    fake.api.failNext("chat.startStream", "missing_scope");
    expect(await rig.channel.startStream(threadRef("3.1"))).toBeUndefined();
  });
});

describe("slack lifecycle", () => {
  it("reconnects after Slack asks it to, through a 5xx, and reports the gap in status", async () => {
    fake.api.httpErrorNext("apps.connections.open", 503);
    fake.socket.askToReconnect();
    await eventually(() => !rig.channel.status().connected, 2000, "the socket to drop");
    expect(rig.channel.status().state).toBe("degraded");
    await fake.socket.waitForConnections(2);
    await eventually(() => rig.channel.status().connected, 12_000, "connected again");
    expect(fake.api.calls.filter((c) => c.method === "apps.connections.open")).toHaveLength(3);
    await fake.dm("after reconnect");
    expect(rig.inbox.at(-1)?.text).toBe("after reconnect");
  });

  it("check() uses auth.test and names the bot", async () => {
    expect(await rig.channel.check()).toMatch(/^bot @antler \(UBOT\) in team T0001, socket mode$/);
  });

  it("fails to start with a rejected token, with status and lastError", async () => {
    const http = new HttpServer({ host: "127.0.0.1", port: 0, logger: silentLogger() });
    const config = SlackChannelConfig.parse({ bot_token: "xoxb-wrong", app_token: fake.appToken, api_base: fake.apiUrl });
    const bad = new SlackChannel({ name: "slack", config, logger: silentLogger(), http: http.mount("slack"), baseDir: "." });
    await expect(bad.start(async () => {})).rejects.toBeInstanceOf(PlatformAuthError);
    expect(bad.status()).toMatchObject({ state: "failed", connected: false });
    expect(bad.status().lastError?.message).toMatch(/invalid_auth.*bot_token/);
    await expect(bad.check()).rejects.toBeInstanceOf(PlatformAuthError);
  });

  it("names the missing key when a credential is absent", async () => {
    const http = new HttpServer({ host: "127.0.0.1", port: 0, logger: silentLogger() });
    const config = SlackChannelConfig.parse({ bot_token: fake.botToken, api_base: fake.apiUrl });
    const bad = new SlackChannel({ name: "slack", config, logger: silentLogger(), http: http.mount("slack"), baseDir: "." });
    const err = await bad.start(async () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(/channels\.slack\.app_token is required.*SLACK_APP_TOKEN/);
  });

  it("rejects a wrong app token as an app_token problem", async () => {
    const http = new HttpServer({ host: "127.0.0.1", port: 0, logger: silentLogger() });
    const config = SlackChannelConfig.parse({ bot_token: fake.botToken, app_token: "xapp-wrong", api_base: fake.apiUrl });
    const bad = new SlackChannel({ name: "slack", config, logger: silentLogger(), http: http.mount("slack"), baseDir: "." });
    const err = await bad.start(async () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformAuthError);
    expect((err as Error).message).toMatch(/app_token/);
    await bad.stop();
  });

  it("starts again after stop and keeps receiving", async () => {
    await fake.dm("one");
    await rig.channel.stop();
    expect(rig.channel.status()).toMatchObject({ state: "stopped", connected: false });
    await rig.start();
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true });
    await fake.dm("two");
    expect(rig.inbox.map((m) => m.text)).toEqual(["one", "two"]);
  });

  it("a stop() during start() leaves no socket open, and a later start() connects once", async () => {
    await rig.channel.stop();
    await eventually(() => fake.socket.open === 0, 2000, "the socket to close");
    for (const settle of [0, 1]) {
      // settle 0: stop while auth.test is in flight; 1: while the socket is being opened.
      fake.socket.helloDelayMs = settle ? 300 : 0;
      const first = rig.start().catch((e: unknown) => e);
      if (settle) await eventually(() => fake.socket.open === 1, 2000, "the socket before its hello");
      await rig.channel.stop();
      expect(await first).toMatchObject({ code: "stopped" });
      await sleep(200);
      expect(fake.socket.open).toBe(0);
      expect(rig.channel.status()).toMatchObject({ state: "stopped", connected: false });
    }
    fake.socket.helloDelayMs = 0;
    await rig.start();
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true });
    expect(fake.socket.open).toBe(1);
  });
});
