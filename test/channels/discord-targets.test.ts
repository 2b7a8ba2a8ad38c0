/** Sending first on Discord: resolveTarget, closed DMs, and nonce-deduped sends, with discord.js against the fake. */
import { afterEach, describe, expect, it } from "vitest";
import { ChannelError, TargetUnreachableError } from "../../src/errors.js";
import { eventually } from "../../src/testing/wait.js";
import { ALICE, BOB, CHANNELS, GUILD_ID } from "../fakes/discord/index.js";
import { type Rig, startRig } from "../fakes/discord/rig.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const byBot = (r: Rig, channelId: string) => r.fake.messagesIn(channelId).filter((m) => m.author.id === r.fake.bot.id);
const file = { name: "notes.txt", mime: "text/plain", data: new TextEncoder().encode("notes"), kind: "file" as const };

describe("discord resolveTarget: people", () => {
  it("opens a DM with a user, keyed as their DMs are, and posts there", async () => {
    rig = await startRig();
    const ref = await rig.channel.resolveTarget({ user: ALICE.id });
    const dm = rig.fake.dmChannelOf(ALICE);
    expect(ref).toEqual({ channel: "discord", key: `discord:@me:${dm}`, chatId: dm, chatType: "direct" });
    await rig.channel.send(ref, { text: "Your build is green." });
    expect(byBot(rig, dm).map((m) => m.text)).toEqual(["Your build is green."]);
    rig.fake.dm(ALICE, "thanks");
    const inbound = await eventually(() => rig!.inbox.find((m) => m.text === "thanks"), 5000, "Alice's DM");
    expect(inbound.ref.key).toBe(ref.key);
  });

  it("turns a user with closed DMs into TargetUnreachableError with Discord's reason", async () => {
    rig = await startRig();
    rig.fake.closeDms(BOB);
    const ref = await rig.channel.resolveTarget({ user: BOB.id });
    const sent = await rig.channel.send(ref, { text: "hello?" }).catch((e) => e);
    expect(sent).toBeInstanceOf(TargetUnreachableError);
    expect(sent.code).toBe("unreachable");
    expect(sent.message).toMatch(/50007|Cannot send messages to this user/);
    const uploaded = await rig.channel.sendFile(ref, file).catch((e) => e);
    expect(uploaded).toBeInstanceOf(TargetUnreachableError);
    expect(byBot(rig, ref.chatId)).toEqual([]);
  });

  it("refuses a user Discord does not know", async () => {
    rig = await startRig();
    const err = await rig.channel.resolveTarget({ user: "1180000000000009999" }).catch((e) => e);
    expect(err).toBeInstanceOf(TargetUnreachableError);
  });
});

describe("discord resolveTarget: channels and threads", () => {
  it("resolves a server channel to the key its messages get with thread: false", async () => {
    rig = await startRig({ thread: false });
    const ref = await rig.channel.resolveTarget({ chat: CHANNELS.general });
    expect(ref).toEqual({
      channel: "discord",
      key: `discord:${GUILD_ID}:${CHANNELS.general}`,
      chatId: CHANNELS.general,
      chatType: "group",
      workspace: GUILD_ID,
    });
    await rig.channel.send(ref, { text: "Standup in five minutes." });
    expect(byBot(rig, CHANNELS.general).map((m) => m.text)).toEqual(["Standup in five minutes."]);
    rig.fake.say(CHANNELS.general, ALICE, "on my way", { mention: true });
    const inbound = await eventually(() => rig!.inbox.find((m) => m.text.includes("on my way")), 5000, "the channel message");
    expect(inbound.ref.key).toBe(ref.key);
  });

  it("resolves a thread, named alone or under its parent, to the thread's key, and posts into it", async () => {
    rig = await startRig();
    const post = rig.fake.forumPost(ALICE, "Printer on fire", "help please", { mention: true });
    const asked = await eventually(() => rig!.inbox.find((m) => m.text.includes("help please")), 5000, "the forum post");
    const alone = await rig.channel.resolveTarget({ chat: post.channelId });
    const named = await rig.channel.resolveTarget({ chat: CHANNELS.help, thread: post.channelId });
    expect(alone.key).toBe(asked.ref.key);
    expect(named).toEqual(alone);
    expect(alone).toMatchObject({ chatId: CHANNELS.help, threadId: post.channelId, workspace: GUILD_ID });
    await rig.channel.send(named, { text: "Update: it is out." });
    expect(byBot(rig, post.channelId).map((m) => m.text)).toEqual(["Update: it is out."]);
    // A forum itself takes no messages; a thread must belong to the channel named with it.
    await expect(rig.channel.resolveTarget({ chat: CHANNELS.help })).rejects.toBeInstanceOf(TargetUnreachableError);
    await expect(rig.channel.resolveTarget({ chat: CHANNELS.general, thread: post.channelId })).rejects.toBeInstanceOf(
      TargetUnreachableError,
    );
  });

  it("refuses an unknown channel and another server's workspace; other failures keep their type", async () => {
    rig = await startRig();
    const unknown = await rig.channel.resolveTarget({ chat: "1180000000000000999" }).catch((e) => e);
    expect(unknown).toBeInstanceOf(TargetUnreachableError);
    expect(unknown.message).toMatch(/10003/);
    await expect(rig.channel.resolveTarget({ chat: CHANNELS.general, workspace: "42" })).rejects.toBeInstanceOf(
      TargetUnreachableError,
    );
    rig.fake.failNext("GET /channels/:id", 502);
    const down = await rig.channel.resolveTarget({ chat: CHANNELS.general }).catch((e) => e);
    expect(down).toBeInstanceOf(ChannelError);
    expect(down).not.toBeInstanceOf(TargetUnreachableError);
  });
});

describe("discord idempotent sends", () => {
  it("posts one message for the same idempotency key sent twice, and two for two keys", async () => {
    rig = await startRig();
    const ref = await rig.channel.resolveTarget({ chat: CHANNELS.random });
    const first = await rig.channel.send(ref, { text: "Daily digest" }, { idempotencyKey: "outbox-17:part-0" });
    const again = await rig.channel.send(ref, { text: "Daily digest" }, { idempotencyKey: "outbox-17:part-0" });
    expect(again.id).toBe(first.id);
    expect(byBot(rig, CHANNELS.random)).toHaveLength(1);
    await rig.channel.send(ref, { text: "Daily digest, part two" }, { idempotencyKey: "outbox-17:part-1" });
    await rig.channel.send(ref, { text: "no key" });
    await rig.channel.send(ref, { text: "no key" });
    expect(byBot(rig, CHANNELS.random).map((m) => m.text)).toEqual([
      "Daily digest",
      "Daily digest, part two",
      "no key",
      "no key",
    ]);
    const posts = rig.fake.calls.filter((c) => c.method === "POST" && c.route === "/channels/:channel/messages");
    const nonces = posts.map((c) => (c.body as { nonce?: string } | undefined)?.nonce);
    expect(nonces[0]).toBe(nonces[1]);
    expect(nonces[2]).not.toBe(nonces[0]);
    expect(nonces[0]!.length).toBeLessThanOrEqual(25);
    expect((posts[0]!.body as { enforce_nonce?: boolean }).enforce_nonce).toBe(true);
    expect(nonces[3]).toBeUndefined();
  });

  it("dedupes a retried file upload by its key", async () => {
    rig = await startRig();
    const ref = await rig.channel.resolveTarget({ user: ALICE.id });
    const a = await rig.channel.sendFile(ref, file, { idempotencyKey: "outbox-9:file-0" });
    const b = await rig.channel.sendFile(ref, file, { idempotencyKey: "outbox-9:file-0" });
    expect(b.id).toBe(a.id);
    expect(byBot(rig, ref.chatId)).toHaveLength(1);
  });
});
