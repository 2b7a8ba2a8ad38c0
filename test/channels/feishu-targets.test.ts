/** Sending first on Feishu: targets resolved through the real SDK against the fake Open Platform. */
import { afterEach, describe, expect, it } from "vitest";
import { TargetUnreachableError } from "../../src/errors.js";
import { DM_CHAT, GROUP_CHAT, USER } from "../fakes/feishu/index.js";
import { type Rig, startRig } from "../fakes/feishu/rig.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const TENANT = "tenant_fake_1";
const STRANGER = "ou_stranger000000001";

/** The key the adapter gives the last inbound message. */
function lastKey(r: Rig): string | undefined {
  return r.inbox.at(-1)?.ref.key;
}

describe("feishu resolveTarget", () => {
  it("resolves a p2p chat to the key the chat's own messages get", async () => {
    rig = await startRig();
    const ref = await rig.channel.resolveTarget({ chat: DM_CHAT });
    expect(ref).toMatchObject({ chatId: DM_CHAT, chatType: "direct", workspace: TENANT });
    const handle = await rig.channel.send(ref, { text: "good morning" });
    expect(handle.ref.key).toBe(ref.key);
    expect(rig.fake.botMessages(DM_CHAT).map((m) => m.text)).toEqual(["good morning"]);
    await rig.fake.userSays({ text: "morning!" });
    expect(lastKey(rig)).toBe(ref.key);
  });

  it("posts into a group as a new topic, and the handle carries the topic's key", async () => {
    rig = await startRig();
    const ref = await rig.channel.resolveTarget({ chat: GROUP_CHAT });
    expect(ref).toMatchObject({ chatId: GROUP_CHAT, chatType: "group" });
    const handle = await rig.channel.send(ref, { text: "standup in 5" });
    expect(handle.ref).toMatchObject({ threadId: handle.id, key: `feishu:${TENANT}:${GROUP_CHAT}:${handle.id}` });
    // A reply in that topic reaches the bot without a mention, in the same conversation.
    await rig.fake.userSays({ chatType: "group", chatId: GROUP_CHAT, rootId: handle.id, text: "ok" });
    expect(rig.inbox.at(-1)).toMatchObject({ mentioned: true, ref: { key: handle.ref.key } });
  });

  it("resolves a topic of a group to the topic's key, and replies inside it", async () => {
    rig = await startRig();
    const asked = await rig.fake.userSays({ chatType: "group", chatId: GROUP_CHAT, mentionBot: true, text: "hi" });
    const root = asked.messageId as string;
    const ref = await rig.channel.resolveTarget({ chat: GROUP_CHAT, thread: root });
    expect(ref.key).toBe(lastKey(rig));
    await rig.channel.send(ref, { text: "a follow-up" });
    expect(rig.fake.botMessages(GROUP_CHAT, root).map((m) => [m.text, m.inThread])).toEqual([["a follow-up", true]]);
  });

  it("reaches a person by open_id: Feishu opens the p2p chat, and the handle carries its key", async () => {
    rig = await startRig();
    rig.fake.addPerson("ou_newcomer0000000001");
    const ref = await rig.channel.resolveTarget({ user: "ou_newcomer0000000001" });
    expect(ref).toMatchObject({ chatType: "direct", extra: { receiveIdType: "open_id" } });
    const handle = await rig.channel.send(ref, { text: "welcome aboard" });
    const chat = rig.fake.world.people.get("ou_newcomer0000000001")?.p2pChat as string;
    expect(rig.fake.botMessages(chat).map((m) => m.text)).toEqual(["welcome aboard"]);
    expect(handle.ref).toMatchObject({ chatId: chat, key: `feishu:${TENANT}:${chat}`, chatType: "direct" });
    expect(handle.ref.extra).toBeUndefined();
    await rig.fake.userSays({ userId: "ou_newcomer0000000001", text: "thanks" });
    expect(lastKey(rig)).toBe(handle.ref.key);
  });

  it("resolves a person who wrote before straight to their chat's key", async () => {
    rig = await startRig();
    await rig.fake.userSays({ text: "hello" });
    const ref = await rig.channel.resolveTarget({ user: USER });
    expect(ref.key).toBe(lastKey(rig));
    expect(ref.chatId).toBe(DM_CHAT);
  });

  it("refuses chats the bot cannot post in with Feishu's reason", async () => {
    rig = await startRig();
    rig.fake.addChat("oc_elsewhere000000001", "group", false);
    const outside = rig.channel.resolveTarget({ chat: "oc_elsewhere000000001" });
    await expect(outside).rejects.toBeInstanceOf(TargetUnreachableError);
    await expect(outside).rejects.toThrow(/not in chat oc_elsewhere/);
    const unknown = rig.channel.resolveTarget({ chat: "oc_nosuchchat00000001" });
    await expect(unknown).rejects.toBeInstanceOf(TargetUnreachableError);
    await expect(unknown).rejects.toThrow(/232006/);
  });

  it("maps a person out of reach to TargetUnreachableError when the send is refused", async () => {
    rig = await startRig();
    rig.fake.addPerson("ou_hidden00000000001", false);
    const hidden = await rig.channel.resolveTarget({ user: "ou_hidden00000000001" });
    const refused = rig.channel.send(hidden, { text: "hi" });
    await expect(refused).rejects.toBeInstanceOf(TargetUnreachableError);
    await expect(refused).rejects.toThrow(/230013/);
    const stranger = await rig.channel.resolveTarget({ user: STRANGER });
    const invalid = rig.channel.send(stranger, { text: "hi" });
    await expect(invalid).rejects.toBeInstanceOf(TargetUnreachableError);
    await expect(invalid).rejects.toThrow(/invalid receive_id/);
    // No text fallback was posted anywhere.
    expect(rig.fake.botMessages()).toHaveLength(0);
  });
});

describe("feishu idempotency", () => {
  it("posts a message once when the same idempotency key is sent twice", async () => {
    rig = await startRig();
    const ref = await rig.channel.resolveTarget({ chat: DM_CHAT });
    const first = await rig.channel.send(ref, { text: "only once" }, { idempotencyKey: "outbox-1:0" });
    const again = await rig.channel.send(ref, { text: "only once" }, { idempotencyKey: "outbox-1:0" });
    expect(again.id).toBe(first.id);
    expect(rig.fake.botMessages(DM_CHAT).map((m) => m.text)).toEqual(["only once"]);
    await rig.channel.send(ref, { text: "another part" }, { idempotencyKey: "outbox-1:1" });
    expect(rig.fake.botMessages(DM_CHAT)).toHaveLength(2);
  });

  it("hashes a long idempotency key into Feishu's 50-character uuid", async () => {
    rig = await startRig();
    const ref = await rig.channel.resolveTarget({ chat: DM_CHAT });
    const key = `outbox-${"x".repeat(80)}:0`;
    await rig.channel.send(ref, { text: "long key" }, { idempotencyKey: key });
    await rig.channel.send(ref, { text: "long key" }, { idempotencyKey: key });
    const sends = rig.fake.world.calls.filter((c) => c.op === "send");
    const uuids = sends.map((c) => (c.body as { uuid?: string }).uuid);
    expect(uuids[0]).toBeDefined();
    expect((uuids[0] as string).length).toBeLessThanOrEqual(50);
    expect(uuids[1]).toBe(uuids[0]);
    expect(rig.fake.botMessages(DM_CHAT)).toHaveLength(1);
  });
});
