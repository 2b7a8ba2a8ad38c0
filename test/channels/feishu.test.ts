import { afterEach, describe, expect, it } from "vitest";
import type { ConversationRef, InboundMessage } from "../../src/channels/types.js";
import { PlatformAuthError } from "../../src/errors.js";
import { DM_CHAT, GROUP_CHAT, USER } from "../fakes/feishu/index.js";
import { type Rig, startRig, waitFor } from "../fakes/feishu/rig.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const TENANT = "tenant_fake_1";

describe("feishu inbound over the long connection", () => {
  it("turns a p2p message into a message of the chat's conversation", async () => {
    rig = await startRig();
    const d = await rig.fake.userSays({ text: "hello there" });
    expect(d.ack?.code).toBe(200);
    expect(rig.inbox).toHaveLength(1);
    expect(rig.inbox[0]).toMatchObject({
      channel: "feishu",
      eventId: d.eventId,
      text: "hello there",
      mentioned: true,
      user: { id: USER },
      ref: { key: `feishu:${TENANT}:${DM_CHAT}`, chatId: DM_CHAT, chatType: "direct", replyToId: d.messageId },
    });
    expect(rig.inbox[0]?.fromBot).toBeUndefined();
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true, mode: "websocket" });
  });

  it("acks only after the sink has recorded the message", async () => {
    rig = await startRig();
    rig.onSink(() => new Promise((r) => setTimeout(r, 300)));
    const d = await rig.fake.userSays({ text: "slow core" });
    expect(d.ack?.code).toBe(200);
    expect(d.ack?.ms).toBeGreaterThanOrEqual(280);
  });

  it("acks with an error when the sink fails, so the platform redelivers", async () => {
    rig = await startRig();
    rig.onSink(async () => {
      throw new Error("disk full");
    });
    const d = await rig.fake.userSays({ text: "lost?" });
    expect(d.ack?.code).toBe(500);
  });

  it("reports group mentions truthfully, strips the bot's placeholder and keys by topic", async () => {
    rig = await startRig();
    const plain = await rig.fake.userSays({ chatType: "group", text: "just chatting" });
    const asked = await rig.fake.userSays({
      chatType: "group",
      text: "what does Bob think?",
      mentionBot: true,
      mentions: [{ name: "Bob", openId: "ou_bob" }],
    });
    const [a, b] = rig.inbox;
    expect(a).toMatchObject({ mentioned: false, text: "just chatting" });
    expect(a?.ref).toMatchObject({ key: `feishu:${TENANT}:${GROUP_CHAT}:${plain.messageId}`, chatType: "group" });
    expect(b).toMatchObject({ mentioned: true, text: "@Bob what does Bob think?" });
    expect(b?.ref).toMatchObject({
      key: `feishu:${TENANT}:${GROUP_CHAT}:${asked.messageId}`,
      threadId: asked.messageId,
      replyToId: asked.messageId,
    });
  });

  it("continues a topic: a follow-up in it has the same key, and needs no mention once the bot is in it", async () => {
    rig = await startRig();
    const first = await rig.fake.userSays({ chatType: "group", text: "start", mentionBot: true });
    const root = first.messageId as string;
    const before = await rig.fake.userSays({ chatType: "group", rootId: "om_elsewhere", text: "other topic" });
    await rig.channel.send(rig.inbox[0]?.ref as ConversationRef, { text: "on it" });
    await rig.fake.userSays({ chatType: "group", rootId: root, text: "and more" });
    const [, other, follow] = rig.inbox;
    expect(before.ack?.code).toBe(200);
    expect(other?.mentioned).toBe(false);
    expect(follow).toMatchObject({ mentioned: true, text: "and more" });
    expect(follow?.ref.key).toBe(rig.inbox[0]?.ref.key);
    expect(follow?.ref.replyToId).not.toBe(root);
  });

  it("reads post (rich text) messages with mentions", async () => {
    rig = await startRig();
    await rig.fake.userSays({ chatType: "group", messageType: "post", mentionBot: true, text: "rich hello" });
    expect(rig.inbox[0]).toMatchObject({ mentioned: true, text: "rich hello" });
  });

  it("merges events split into several frames", async () => {
    rig = await startRig();
    rig.fake.ws.splitBytes = 64;
    const long = "x".repeat(500);
    const d = await rig.fake.userSays({ text: long });
    expect(d.ack?.code).toBe(200);
    expect(rig.inbox[0]?.text).toBe(long);
  });

  it("marks messages from apps as fromBot", async () => {
    rig = await startRig();
    await rig.fake.userSays({ text: "beep", senderType: "app", userId: "ou_otherbot" });
    expect(rig.inbox[0]).toMatchObject({ fromBot: true, text: "beep" });
  });

  it("reconnects after the socket drops, and status says so meanwhile", async () => {
    rig = await startRig();
    // The endpoint is busy for a while, so the SDK keeps retrying and the gap is observable.
    rig.fake.failNext("ws_endpoint", { status: 200, code: 1000040343, msg: "system busy" }, 5);
    rig.fake.dropSockets();
    await waitFor(() => !rig?.channel.status().connected, 2000, "disconnected status");
    expect(rig.channel.status().state).toBe("degraded");
    await waitFor(() => rig?.channel.status().connected, 5000, "reconnected");
    await rig.fake.userSays({ text: "after reconnect" });
    expect(rig.inbox.at(-1)?.text).toBe("after reconnect");
    await rig.channel.stop();
    expect(rig.channel.status()).toMatchObject({ state: "stopped", connected: false });
  });
});

describe("feishu card clicks", () => {
  async function question(r: Rig, group = true): Promise<InboundMessage> {
    await r.fake.userSays({ chatType: group ? "group" : "p2p", text: "choose", mentionBot: group });
    const msg = r.inbox.at(-1) as InboundMessage;
    await r.channel.send(msg.ref, {
      text: "Which **colour**?",
      questionId: "q1",
      buttons: [
        { id: "0", label: "Red" },
        { id: "1", label: "Blue" },
      ],
    });
    return msg;
  }

  it("delivers a click as an action in the question's conversation and answers with a toast", async () => {
    rig = await startRig();
    const asked = await question(rig);
    const card = rig.fake.botMessages().at(-1);
    expect(card?.text).toBe("Which colour?");
    expect(card?.buttons.map((b) => b.label)).toEqual(["Red", "Blue"]);
    const d = await rig.fake.click("Blue");
    expect(d.ack?.ms).toBeLessThan(3000);
    expect(d.answer).toMatchObject({ toast: { type: "success", content: "Selected: Blue" } });
    const click = rig.inbox.at(-1);
    expect(click).toMatchObject({
      eventId: d.eventId,
      text: "",
      user: { id: USER },
      action: { questionId: "q1", buttonId: "1", messageId: card?.id },
      ref: { key: asked.ref.key, chatType: "group", threadId: asked.ref.threadId },
    });
  });

  it("shows the core's refusal as an error toast to the clicker only", async () => {
    rig = await startRig({ answerClicks: false });
    await question(rig);
    rig.onSink(async (m) => {
      if (m.action) setImmediate(() => void rig?.channel.answerAction(m, "Only Alice can answer this question."));
    });
    const d = await rig.fake.click("Blue", { userId: "ou_bob" });
    expect(d.ack?.ms).toBeLessThan(3000);
    expect(d.answer).toMatchObject({ toast: { type: "error", content: "Only Alice can answer this question." } });
    // The card itself is unchanged: its buttons stay for the asker.
    expect(
      rig.fake
        .botMessages()
        .at(-1)
        ?.buttons.map((b) => b.label),
    ).toEqual(["Red", "Blue"]);
  });

  it("answers a click the core did not decide on in time with a plain toast, inside Feishu's 3 s", async () => {
    rig = await startRig({ answerClicks: false });
    await question(rig);
    const d = await rig.fake.click("Red");
    expect(d.ack?.ms).toBeGreaterThanOrEqual(1900);
    expect(d.ack?.ms).toBeLessThan(3000);
    expect(d.answer).toMatchObject({ toast: { type: "info", content: "Received" } });
    const click = rig.inbox.at(-1) as InboundMessage;
    expect(await rig.channel.answerAction(click, "too late")).toBe(false);
  });

  it("refuses clicks from users outside allowed_users without forwarding them", async () => {
    rig = await startRig({ config: { allowed_users: [USER] } });
    await question(rig, false);
    const d = await rig.fake.click("Red", { userId: "ou_stranger" });
    expect(d.answer).toMatchObject({ toast: { type: "error" } });
    expect(rig.inbox.filter((m) => m.action)).toHaveLength(0);
  });

  it("edits keep the buttons unless told to drop them", async () => {
    rig = await startRig();
    const asked = await question(rig);
    const card = rig.fake.botMessages().at(-1);
    const handle = { id: card?.id as string, ref: asked.ref, extra: { kind: "card" } };
    const sent = await rig.channel.send(asked.ref, { text: "q", questionId: "q2", buttons: [{ id: "a", label: "A" }] });
    await rig.channel.edit(sent, { text: "q (still open)" });
    expect(rig.fake.world.message(sent.id)?.buttons.map((b) => b.label)).toEqual(["A"]);
    await rig.channel.edit(handle, { text: "Which colour? Blue", buttons: [] });
    expect(rig.fake.world.message(handle.id)).toMatchObject({ text: "Which colour? Blue", buttons: [] });
  });
});

describe("feishu outbound", () => {
  async function dmRef(r: Rig): Promise<ConversationRef> {
    await r.fake.userSays({ text: "hi" });
    return r.inbox.at(-1)?.ref as ConversationRef;
  }

  it("replies with a card that renders the markdown, in the user's topic for groups", async () => {
    rig = await startRig();
    const d = await rig.fake.userSays({ chatType: "group", text: "go", mentionBot: true });
    const ref = rig.inbox[0]?.ref as ConversationRef;
    const handle = await rig.channel.send(ref, { text: "**Bold** and `code` <tag>" });
    const msg = rig.fake.world.message(handle.id);
    expect(msg).toMatchObject({ msgType: "interactive", rootId: d.messageId, parentId: d.messageId, inThread: true });
    expect(msg?.text).toBe("Bold and code <tag>");
    expect(msg?.card?.config?.update_multi).toBe(true);
    await rig.channel.edit(handle, { text: "edited _now_" });
    expect(rig.fake.world.message(handle.id)?.versions.map((v) => v.text)).toEqual(["Bold and code <tag>", "edited now"]);
  });

  it("falls back to plain text when the card is refused, and keeps editing that", async () => {
    rig = await startRig();
    const ref = await dmRef(rig);
    rig.fake.failNext("reply", { status: 400, code: 230099, msg: "Failed to create card content" });
    const handle = await rig.channel.send(ref, { text: "**hello**", questionId: "q", buttons: [{ id: "y", label: "Yes" }] });
    const msg = rig.fake.world.message(handle.id);
    expect(msg).toMatchObject({ msgType: "text", text: "hello\n\n1. Yes" });
    await rig.channel.edit(handle, { text: "hello again", buttons: [] });
    expect(rig.fake.world.message(handle.id)?.text).toBe("hello again");
  });

  it("shows the text as a plain message when a card PATCH keeps failing", async () => {
    rig = await startRig();
    const ref = await dmRef(rig);
    const handle = await rig.channel.send(ref, { text: "part" });
    rig.fake.failNext("patch", { status: 400, code: 230099, msg: "card too old" }, 2);
    await rig.channel.edit(handle, { text: "part and more" });
    await rig.channel.edit(handle, { text: "part and the end" });
    const texts = rig.fake.botMessages().map((m) => `${m.msgType}:${m.text}`);
    expect(texts).toEqual(["interactive:part", "text:part and the end"]);
  });

  it("maps platform errors to typed errors", async () => {
    rig = await startRig();
    const ref = await dmRef(rig);
    rig.fake.failNext("reply", { status: 429, code: 99991400, retryAfterSec: 2 });
    await expect(rig.channel.send(ref, { text: "x" })).rejects.toMatchObject({ code: "rate_limited", retryAfterMs: 2000 });
    rig.fake.failNext("reply", { status: 200, code: 230011, msg: "message recalled" });
    await expect(rig.channel.send(ref, { text: "x" })).rejects.toMatchObject({ code: "not_found" });
    rig.fake.failNext("reply", { status: 400, code: 99991663, msg: "token invalid" });
    await expect(rig.channel.send(ref, { text: "x" })).rejects.toBeInstanceOf(PlatformAuthError);
    expect(rig.channel.status().lastError?.message).toMatch(/99991663/);
  });

  it("shows typing as one reaction on the user's message, removed when done", async () => {
    rig = await startRig();
    const ref = await dmRef(rig);
    await rig.channel.typing?.(ref);
    await rig.channel.typing?.(ref);
    const user = rig.fake.world.message(ref.replyToId as string);
    expect(user?.reactions.map((r) => r.emoji)).toEqual(["Typing"]);
    await rig.channel.typingDone?.(ref);
    expect(user?.reactions).toEqual([]);
  });
});

describe("feishu CardKit streaming", () => {
  it("streams into one card with strictly increasing sequences and closes streaming mode", async () => {
    rig = await startRig();
    const d = await rig.fake.userSays({ chatType: "group", text: "stream", mentionBot: true });
    const ref = rig.inbox[0]?.ref as ConversationRef;
    const stream = await rig.channel.startStream(ref);
    if (!stream) throw new Error("no stream");
    for (const text of ["Hello", "Hello, wor", "Hello, world", "Hello, world. **Done**"]) {
      await stream.update(text);
      await new Promise((r) => setTimeout(r, 200));
    }
    await stream.finish("Hello, world. **Done**.");
    const msg = rig.fake.world.message(stream.handle.id);
    const card = rig.fake.world.cards.get(msg?.cardId as string);
    expect(msg).toMatchObject({ rootId: d.messageId, inThread: true, text: "Hello, world. Done." });
    expect(card?.card.config?.streaming_mode).toBe(false);
    const seqs = card?.sequences ?? [];
    expect(seqs.length).toBe(6);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
    expect(msg?.versions.map((v) => v.text)).toEqual([
      "",
      "Hello",
      "Hello, wor",
      "Hello, world",
      "Hello, world. Done",
      "Hello, world. Done.",
    ]);
    expect(rig.fake.world.rateLimited()).toEqual([]);
  });

  it("returns no stream when the card cannot be created, and throws when an update is refused", async () => {
    rig = await startRig();
    await rig.fake.userSays({ text: "hi" });
    const ref = rig.inbox[0]?.ref as ConversationRef;
    rig.fake.failNext("card_create", { status: 400, code: 300303, msg: "cardkit unavailable" });
    expect(await rig.channel.startStream(ref)).toBeUndefined();
    const stream = await rig.channel.startStream(ref);
    rig.fake.failNext("card_content", { status: 500, code: 300500, msg: "internal" });
    await expect(stream?.update("text")).rejects.toMatchObject({ code: "platform_unavailable" });
    await stream?.update("text, retried");
    expect(rig.fake.world.message(stream?.handle.id as string)?.text).toBe("text, retried");
  });

  it("edits a streamed card through CardKit, since message PATCH ignores it", async () => {
    rig = await startRig();
    await rig.fake.userSays({ text: "hi" });
    const ref = rig.inbox[0]?.ref as ConversationRef;
    const stream = await rig.channel.startStream(ref);
    await stream?.finish("first");
    await rig.channel.edit(stream?.handle as never, { text: "second" });
    expect(rig.fake.world.message(stream?.handle.id as string)?.text).toBe("second");
  });
});

describe("feishu start and check", () => {
  it("names the missing key", async () => {
    rig = await startRig({ noStart: true, config: { app_secret: "" } });
    await expect(rig.channel.start(async () => {})).rejects.toThrow(/channels\.feishu\.app_secret is required/);
    expect(rig.channel.status()).toMatchObject({ state: "failed", connected: false });
  });

  it("refuses an app id the long connection would silently ignore", async () => {
    rig = await startRig({ noStart: true, config: { app_id: "cli_short" } });
    await expect(rig.channel.start(async () => {})).rejects.toThrow(/app_id must be "cli_" and 16 hex digits/);
  });

  it("fails with an auth error on a wrong secret", async () => {
    rig = await startRig({ noStart: true, config: { app_secret: "wrong" } });
    const err = await rig.channel.start(async () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformAuthError);
    expect(rig.channel.status().lastError?.message).toMatch(/10014/);
    await expect(rig.channel.check()).rejects.toBeInstanceOf(PlatformAuthError);
  });

  it("starts again after a failed start and after stop, with a truthful status and one connection", async () => {
    rig = await startRig({ noStart: true });
    const sink = async (m: InboundMessage) => {
      rig?.inbox.push(m);
    };
    rig.fake.failNext("bot_info", { status: 500, code: 500, msg: "internal error" });
    await expect(rig.channel.start(sink)).rejects.toThrow(/bot info/);
    expect(rig.channel.status()).toMatchObject({ state: "failed", reason: expect.stringMatching(/bot info/) });

    await rig.channel.start(sink);
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true });
    expect(rig.channel.status().reason).toBeUndefined();

    await rig.channel.stop();
    await waitFor(() => rig?.fake.ws.connected === 0, 2000, "socket closed on stop");
    await rig.channel.start(sink);
    // A second start without stop replaces the connection instead of leaking the first one.
    await rig.channel.start(sink);
    await waitFor(() => rig?.fake.ws.connected === 1, 2000, "exactly one connection");
    const d = await rig.fake.userSays({ text: "after restart" });
    expect(d.ack?.code).toBe(200);
    expect(rig.inbox.map((m) => m.text)).toEqual(["after restart"]);
    expect(rig.fake.ws.connected).toBe(1);
  });

  it("stop() while the long connection is still coming up ends start() instead of leaving it pending", async () => {
    rig = await startRig({ noStart: true });
    // The endpoint keeps failing, so the SDK stays in its retry loop and onReady never comes.
    rig.fake.failNext("ws_endpoint", { status: 200, code: 1000040343, msg: "system busy" }, 100);
    const started = rig.channel
      .start(async () => {})
      .then(
        () => "resolved",
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
    await waitFor(() => rig?.fake.world.calls.some((c) => c.op === "ws_endpoint"), 3000, "first endpoint call");
    await rig.channel.stop();
    const outcome = await Promise.race([started, new Promise((r) => setTimeout(() => r("pending"), 1000))]);
    expect(outcome).toMatch(/stopped/);
    expect(rig.channel.status()).toMatchObject({ state: "stopped", connected: false });
  });

  it("check fetches a tenant token and the bot info", async () => {
    rig = await startRig({ noStart: true });
    await expect(rig.channel.check()).resolves.toMatch(/bot "Antler" \(ou_bot000000000000001\)/);
    const ops = rig.fake.world.calls.map((c) => c.op);
    expect(ops).toContain("token");
    expect(ops).toContain("bot_info");
  });
});
