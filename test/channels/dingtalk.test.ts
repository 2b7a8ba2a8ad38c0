/**
 * The DingTalk adapter with the real dingtalk-stream SDK against the fake DingTalk: inbound
 * translation and acks, markdown replies, errors, HTTP callbacks, lifecycle.
 */
import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { ChannelError, PlatformAuthError, PlatformRateLimitError } from "../../src/errors.js";
import { BOB } from "../fakes/dingtalk/index.js";
import { makeRig, type Rig, sleep, startRig, until } from "../fakes/dingtalk/rig.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe("dingtalk inbound (stream mode)", () => {
  it("translates a DM and acks the frame only after the sink resolved", async () => {
    rig = await startRig();
    rig.sinkBehaviour.delayMs = 300;
    const sent = await rig.fake.userSays("hello there");
    await sleep(150);
    expect(rig.fake.gateway.acked(sent!.messageId!), "acked before the core recorded it").toBe(false);
    await until(() => rig!.fake.gateway.acked(sent!.messageId!), "the ack");
    const msg = rig.inbox[0]!;
    expect(msg).toMatchObject({
      channel: "dingtalk",
      eventId: sent!.msgId,
      text: "hello there",
      mentioned: true,
      user: { id: "staff-alice", name: "Alice" },
      ref: { key: "dingtalk:ding-corp-1:staff-alice", chatId: rig.fake.dmId(), chatType: "direct" },
    });
    expect(msg.fromBot).toBeUndefined();
    expect(typeof msg.ref.extra?.sessionWebhook).toBe("string");
  });

  it("keys group mentions per sender by default and trims the leftover space", async () => {
    rig = await startRig();
    await rig.fake.userSays("what is new?", { group: "cid-group-1" });
    await rig.fake.userSays("and for me?", { group: "cid-group-1", user: BOB });
    expect(await rig.fake.userSays("ignored", { group: "cid-group-1", mention: false })).toBeUndefined();
    await until(() => rig!.inbox.length === 2, "two group messages");
    const [alice, bob] = rig.inbox;
    expect(alice).toMatchObject({ text: "what is new?", mentioned: true, ref: { chatType: "group", chatId: "cid-group-1" } });
    expect(alice!.ref.key).toBe("dingtalk:ding-corp-1:cid-group-1:staff-alice");
    expect(bob!.ref.key).toBe("dingtalk:ding-corp-1:cid-group-1:staff-bob");
  });

  it("shares one conversation per group with session_scope chat", async () => {
    rig = await startRig({ session_scope: "chat" });
    await rig.fake.userSays("one", { group: "cid-group-1" });
    await rig.fake.userSays("two", { group: "cid-group-1", user: BOB });
    await until(() => rig!.inbox.length === 2, "two group messages");
    expect(rig.inbox.map((m) => m.ref.key)).toEqual(["dingtalk:ding-corp-1:cid-group-1", "dingtalk:ding-corp-1:cid-group-1"]);
  });

  it("marks the robot's own messages fromBot and still acks them", async () => {
    rig = await startRig();
    const sent = await rig.fake.botEcho("echo");
    await until(() => rig!.fake.gateway.acked(sent!.messageId!), "the ack");
    expect(rig.inbox[0]?.fromBot).toBe(true);
  });

  it("acks every frame; a frame whose ack was lost comes again with the same event id", async () => {
    rig = await startRig({}, { resendAfterMs: 300 });
    rig.fake.gateway.dropAcks(1);
    const sent = await rig.fake.userSays("once please");
    await until(() => rig!.fake.gateway.acked(sent!.messageId!), "the ack of the resent frame");
    const copies = rig.fake.gateway.sent.filter((f) => f.headers.messageId === sent!.messageId);
    expect(copies.length).toBe(2);
    expect(rig.inbox.map((m) => m.eventId)).toEqual([sent!.msgId, sent!.msgId]);
    const acks = rig.fake.gateway.acks.filter((a) => a.messageId === sent!.messageId);
    expect(acks.length).toBe(1);
    expect(acks[0]).toMatchObject({ code: 200, data: { response: {} } });
  });

  it("leaves a frame unacked when the core could not record it, so DingTalk redelivers it", async () => {
    rig = await startRig({}, { resendAfterMs: 300 });
    rig.sinkBehaviour.failTimes = 1;
    const sent = await rig.fake.userSays("keep me");
    await sleep(150);
    expect(rig.fake.gateway.acked(sent!.messageId!)).toBe(false);
    await until(() => rig!.fake.gateway.acked(sent!.messageId!), "the ack after redelivery");
    expect(rig.inbox.map((m) => m.text)).toEqual(["keep me"]);
  });

  it("answers SYSTEM pings and reconnects after the socket drops", async () => {
    rig = await startRig();
    rig.fake.gateway.system("ping", '{"opaque":"x"}');
    await until(() => rig!.fake.gateway.pings.length === 1, "the ping echo");
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true, mode: "stream" });
    rig.fake.gateway.dropSocket();
    await until(() => rig!.channel.status().connected === false, "disconnected status");
    expect(rig.channel.status()).toMatchObject({ state: "degraded", reason: expect.stringMatching(/reconnecting/) });
    await until(() => rig!.channel.status().connected, "the reconnect", 5_000);
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true });
    expect(rig.channel.status().reason).toBeUndefined();
    expect(rig.fake.gateway.connections).toBe(2);
    await rig.fake.userSays("after the drop");
    await until(() => rig!.inbox.some((m) => m.text === "after the drop"), "a message after the reconnect");
  });

  it("subscribes only the robot topic without card buttons", async () => {
    rig = await startRig();
    expect(rig.fake.gateway.subscriptions).toEqual([{ type: "CALLBACK", topic: "/v1.0/im/bot/messages/get" }]);
    expect(rig.channel.capabilities).toMatchObject({
      edits: false,
      buttons: false,
      markdown: expect.objectContaining({ name: "dingtalk-md" }),
    });
  });
});

describe("dingtalk markdown replies (no card template)", () => {
  it("sends one markdown message through the sessionWebhook, in DingTalk's subset", async () => {
    rig = await startRig();
    await rig.fake.userSays("hi");
    await until(() => rig!.inbox.length === 1, "the message");
    const ref = rig.inbox[0]!.ref;
    const text = "**Done.** Run this:\n\n```sh\nnpm test\n  --watch\n```\n\n| name | value |\n|---|---|\n| a | 1 |";
    const handle = await rig.channel.send(ref, { text });
    const [msg] = rig.fake.messagesIn(rig.fake.dmId());
    expect(msg).toMatchObject({ via: "webhook", kind: "markdown", title: "Done. Run this:" });
    expect(msg!.markdown).not.toContain("```");
    expect(msg!.markdown).not.toContain("|---");
    expect(msg!.text).toBe("Done. Run this:\nsh:\nnpm test\n  --watch\nname: a, value: 1");
    await expect(rig.channel.edit(handle, { text: "changed" })).rejects.toBeInstanceOf(ChannelError);
  });

  it("falls back to the robot APIs once the sessionWebhook expired (DM and group)", async () => {
    rig = await startRig();
    await rig.fake.userSays("dm");
    await rig.fake.userSays("group", { group: "cid-group-1" });
    await until(() => rig!.inbox.length === 2, "both messages");
    rig.fake.expireWebhooks();
    await rig.channel.send(rig.inbox[0]!.ref, { text: "late DM answer" });
    await rig.channel.send(rig.inbox[1]!.ref, { text: "late group answer" });
    expect(rig.fake.messagesIn(rig.fake.dmId()).map((m) => [m.via, m.text])).toEqual([["robot", "late DM answer"]]);
    expect(rig.fake.messagesIn("cid-group-1").map((m) => [m.via, m.text])).toEqual([["robot", "late group answer"]]);
    // The server said "session 不存在" (300001) before the fallback.
    expect(rig.fake.calls.filter((c) => c.api === "webhook").length).toBe(2);
  });

  it("skips a webhook whose expiry time has passed without calling it", async () => {
    rig = await startRig();
    rig.fake.webhookLifetimeMs = 5_000;
    await rig.fake.userSays("dm");
    await until(() => rig!.inbox.length === 1, "the message");
    await rig.channel.send(rig.inbox[0]!.ref, { text: "answer" });
    expect(rig.fake.calls.filter((c) => c.api !== "gateway").map((c) => c.api)).toEqual(["token", "robot.dm"]);
  });

  it("maps throttling to PlatformRateLimitError", async () => {
    rig = await startRig();
    await rig.fake.userSays("hi");
    await until(() => rig!.inbox.length === 1, "the message");
    const ref = rig.inbox[0]!.ref;
    rig.fake.fail("webhook", "too_fast");
    const tooFast = await rig.channel.send(ref, { text: "x" }).catch((e: unknown) => e);
    expect(tooFast).toBeInstanceOf(PlatformRateLimitError);
    expect((tooFast as PlatformRateLimitError).retryAfterMs).toBe(3000);
    rig.fake.expireWebhooks();
    rig.fake.fail("robot.dm", "qps");
    const qps = await rig.channel.send(ref, { text: "x" }).catch((e: unknown) => e);
    expect(qps).toBeInstanceOf(PlatformRateLimitError);
    expect((qps as PlatformRateLimitError).retryAfterMs).toBe(1000);
    expect(rig.channel.status().lastError?.message).toContain("QpsLimitForApi");
  });

  it("caches the access token and refreshes it when DingTalk rejects it", async () => {
    rig = await startRig();
    await rig.fake.userSays("hi");
    await until(() => rig!.inbox.length === 1, "the message");
    rig.fake.expireWebhooks();
    const ref = rig.inbox[0]!.ref;
    await rig.channel.send(ref, { text: "one" });
    await rig.channel.send(ref, { text: "two" });
    expect(rig.fake.api.tokensIssued).toBe(1);
    rig.fake.api.expireTokens();
    await rig.channel.send(ref, { text: "three" });
    expect(rig.fake.api.tokensIssued).toBe(2);
    expect(rig.fake.messagesIn(rig.fake.dmId()).map((m) => m.text)).toEqual(["one", "two", "three"]);
  });
});

describe("dingtalk lifecycle and doctor", () => {
  it("names the missing key when credentials are absent", async () => {
    const { rig: r, start } = await makeRig({ client_secret: undefined });
    rig = r;
    await expect(start()).rejects.toThrow("channels.dingtalk.client_secret is required: set DINGTALK_CLIENT_SECRET");
    expect(rig.channel.status().state).toBe("failed");
  });

  it("fails with PlatformAuthError and reports it when the secret is wrong", async () => {
    const { rig: r, start } = await makeRig({ client_secret: "wrong-secret" });
    rig = r;
    await expect(start()).rejects.toBeInstanceOf(PlatformAuthError);
    expect(rig.channel.status()).toMatchObject({ state: "failed", connected: false });
    expect(rig.channel.status().lastError?.message).toContain("invalidClientIdOrSecret");
    await expect(rig.channel.check()).rejects.toBeInstanceOf(PlatformAuthError);
  });

  it("check() fetches an access token", async () => {
    const { rig: r } = await makeRig();
    rig = r;
    await expect(rig.channel.check()).resolves.toContain("access token issued for client ding-app-key");
    expect(rig.fake.api.tokensIssued).toBe(1);
  });

  it("stop() closes the socket for good", async () => {
    rig = await startRig();
    await rig.channel.stop();
    expect(rig.channel.status()).toMatchObject({ state: "stopped", connected: false });
    await sleep(1_300);
    expect(rig.fake.gateway.connected).toBe(false);
    expect(rig.fake.gateway.connections).toBe(1);
  });
});

describe("dingtalk http callback mode", () => {
  it("accepts signed callbacks and rejects bad or stale signatures", async () => {
    rig = await startRig({ mode: "webhook" });
    rig.fake.callbackUrl = `${rig.httpUrl}/webhooks/dingtalk`;
    expect(await rig.fake.userSays("signed")).toMatchObject({ status: 200 });
    expect(await rig.fake.userSays("forged", { signWith: "not-the-secret" })).toMatchObject({ status: 401 });
    expect(await rig.fake.userSays("stale", { timestamp: Date.now() - 2 * 60 * 60_000 })).toMatchObject({ status: 401 });
    const ts = String(Date.now());
    const secret = rig.fake.clientSecret;
    const garbled = await fetch(rig.fake.callbackUrl, {
      method: "POST",
      headers: { timestamp: ts, sign: createHmac("sha256", secret).update(`${ts}\n${secret}`).digest("base64") },
      body: "{not json",
    });
    expect(garbled.status).toBe(400);
    expect(rig.inbox.map((m) => m.text)).toEqual(["signed"]);
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true, mode: "webhook" });
    await rig.channel.stop();
    // The route is down: 503 + Retry-After (the platform delivers again), nothing handled.
    const res = await fetch(rig.fake.callbackUrl, { method: "POST", body: "{}" });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBeTruthy();
  });
});
