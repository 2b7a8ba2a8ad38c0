/** Sending first on Telegram: resolveTarget and sends to chats nobody just wrote in, against the fake Bot API. */
import { afterEach, describe, expect, it } from "vitest";
import { ChannelError, TargetUnreachableError } from "../../src/errors.js";
import { alice, bob, FORUM, GROUP, type Rig, startRig, waitFor } from "../fakes/telegram/rig.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const BOT = "antler_test_bot";

describe("telegram resolveTarget", () => {
  it("resolves a group the bot is in to the key its members' messages get, and posts there", async () => {
    rig = await startRig();
    rig.fake.addChat(GROUP);
    const ref = await rig.channel.resolveTarget({ chat: String(GROUP.id) });
    expect(ref).toMatchObject({ channel: "telegram", chatId: String(GROUP.id), chatType: "group" });
    expect(ref.threadId).toBeUndefined();
    await rig.channel.send(ref, { text: "Good morning, team." });
    expect(rig.fake.botMessages(GROUP.id).map((m) => m.text)).toEqual(["Good morning, team."]);
    rig.fake.say(GROUP, alice, `@${BOT} thanks`);
    const [inbound] = await waitFor(() => rig!.inbox.length === 1 && rig!.inbox, 5000, "the answer in the group");
    expect(inbound!.ref.key).toBe(ref.key);
    expect(rig.fake.calls.some((c) => c.method === "getChat" && String(c.params.chat_id) === String(GROUP.id))).toBe(true);
  });

  it("resolves a user who started the bot to their private chat, keyed like their DMs", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    const [dm] = await waitFor(() => rig!.inbox.length === 1 && rig!.inbox, 5000, "the DM");
    const ref = await rig.channel.resolveTarget({ user: String(alice.id) });
    expect(ref).toMatchObject({ key: dm!.ref.key, chatId: String(alice.id), chatType: "direct" });
    await rig.channel.send(ref, { text: "A reminder for you." });
    expect(rig.fake.botMessages(alice.id).map((m) => m.text)).toEqual(["A reminder for you."]);
    // The same person named as a chat resolves to the same conversation.
    expect((await rig.channel.resolveTarget({ chat: String(alice.id) })).key).toBe(dm!.ref.key);
  });

  it("refuses a user who never started the bot with Telegram's reason, on resolve and on send", async () => {
    rig = await startRig();
    rig.fake.addUser(bob);
    const resolved = await rig.channel.resolveTarget({ user: String(bob.id) }).catch((e) => e);
    expect(resolved).toBeInstanceOf(TargetUnreachableError);
    expect(resolved.code).toBe("unreachable");
    expect(resolved.message).toMatch(/chat not found/);
    // Sending blind (a stored ref) gets the 403 Telegram gives, as the same typed error.
    const ref = { channel: "telegram", key: `telegram:123456:${bob.id}`, chatId: String(bob.id), chatType: "direct" as const };
    const sent = await rig.channel.send(ref, { text: "hello?" }).catch((e) => e);
    expect(sent).toBeInstanceOf(TargetUnreachableError);
    expect(sent.message).toMatch(/bot can't initiate conversation with a user/);
    const file = await rig.channel
      .sendFile(ref, { name: "a.txt", mime: "text/plain", data: new TextEncoder().encode("x"), kind: "file" })
      .catch((e) => e);
    expect(file).toBeInstanceOf(TargetUnreachableError);
    expect(rig.fake.botMessages(bob.id)).toEqual([]);
  });

  it("maps a user who blocked the bot to TargetUnreachableError when sending", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await waitFor(() => rig!.inbox.length === 1, 5000, "the DM");
    rig.fake.blockBot(alice.id);
    const ref = await rig.channel.resolveTarget({ user: String(alice.id) });
    const sent = await rig.channel.send(ref, { text: "still there?" }).catch((e) => e);
    expect(sent).toBeInstanceOf(TargetUnreachableError);
    expect(sent.message).toMatch(/bot was blocked by the user/);
  });

  it("refuses a group the bot is not in", async () => {
    rig = await startRig();
    const err = await rig.channel.resolveTarget({ chat: "-100999" }).catch((e) => e);
    expect(err).toBeInstanceOf(TargetUnreachableError);
    expect(err.message).toMatch(/chat not found/);
  });

  it("names a forum topic as a thread: its key is the topic's, and the message lands in it", async () => {
    rig = await startRig();
    rig.fake.addChat(FORUM);
    rig.fake.openTopic(FORUM.id, 7);
    const ref = await rig.channel.resolveTarget({ chat: String(FORUM.id), thread: "7" });
    expect(ref).toMatchObject({ chatType: "group", threadId: "7" });
    await rig.channel.send(ref, { text: "Weekly digest" });
    expect(rig.fake.botMessages(FORUM.id, 7).map((m) => m.text)).toEqual(["Weekly digest"]);
    rig.fake.say(FORUM, alice, `@${BOT} more please`, { threadId: 7 });
    const [inbound] = await waitFor(() => rig!.inbox.length === 1 && rig!.inbox, 5000, "the topic message");
    expect(inbound!.ref.key).toBe(ref.key);
    const general = await rig.channel.resolveTarget({ chat: String(FORUM.id) });
    expect(general.key).not.toBe(ref.key);
    // A topic that does not exist is refused by Telegram when posting.
    const gone = await rig.channel.resolveTarget({ chat: String(FORUM.id), thread: "99" });
    const err = await rig.channel.send(gone, { text: "x" }).catch((e) => e);
    expect(err).toBeInstanceOf(TargetUnreachableError);
    expect(err.message).toMatch(/message thread not found/);
  });

  it("refuses a thread in a chat without topics, a group named as a user, and another bot's workspace", async () => {
    rig = await startRig();
    rig.fake.addChat(GROUP);
    await expect(rig.channel.resolveTarget({ chat: String(GROUP.id), thread: "5" })).rejects.toBeInstanceOf(
      TargetUnreachableError,
    );
    await expect(rig.channel.resolveTarget({ user: String(GROUP.id) })).rejects.toBeInstanceOf(TargetUnreachableError);
    await expect(rig.channel.resolveTarget({ chat: String(GROUP.id), workspace: "42" })).rejects.toBeInstanceOf(
      TargetUnreachableError,
    );
    const ok = await rig.channel.resolveTarget({ chat: String(GROUP.id), workspace: String(rig.fake.bot.id) });
    expect(ok.chatId).toBe(String(GROUP.id));
  });

  it("keeps Telegram's other failures as their own typed errors", async () => {
    rig = await startRig();
    rig.fake.addChat(GROUP);
    rig.fake.inject({ method: "getChat", code: 502, description: "Bad Gateway" });
    const err = await rig.channel.resolveTarget({ chat: String(GROUP.id) }).catch((e) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect(err).not.toBeInstanceOf(TargetUnreachableError);
    expect(err.code).toBe("platform_unavailable");
  });
});
