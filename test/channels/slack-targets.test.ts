/** Sending first on Slack: resolveTarget and sends to conversations nobody just wrote in, real web client against the fake. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ChannelError, TargetUnreachableError } from "../../src/errors.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { type AdapterRig, adapterRig } from "../fakes/slack/rig.js";

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

const file = { name: "report.txt", mime: "text/plain", data: new TextEncoder().encode("numbers"), kind: "file" as const };

describe("slack resolveTarget: people", () => {
  it("opens a DM with a member who never wrote, keyed as their DMs will be", async () => {
    fake.workspace.users.add("U0042");
    const ref = await rig.channel.resolveTarget({ user: "U0042" });
    expect(fake.calls("conversations.open")).toEqual([expect.objectContaining({ users: "U0042" })]);
    expect(ref).toMatchObject({ chatType: "direct", workspace: "T0001", extra: { team: "T0001", user: "U0042" } });
    expect(ref.chatId).toMatch(/^D/);
    expect(ref.threadId).toBeUndefined();
    await rig.channel.send(ref, { text: "Your weekly report is ready." });
    expect(fake.botMessages(ref.chatId).map((m) => m.text)).toEqual(["Your weekly report is ready."]);
    await fake.dm("thanks!", { channel: ref.chatId, user: "U0042" });
    expect(rig.inbox.at(-1)!.ref.key).toBe(ref.key);
  });

  it("finds the DM a user already has with the bot", async () => {
    await fake.dm("hello");
    const ref = await rig.channel.resolveTarget({ user: "U0001" });
    expect(ref.key).toBe(rig.inbox[0]!.ref.key);
    expect(ref.chatId).toBe("D0001");
  });

  it("refuses a user Slack does not know, and the bot itself, with Slack's reason", async () => {
    const stranger = await rig.channel.resolveTarget({ user: "U9999" }).catch((e) => e);
    expect(stranger).toBeInstanceOf(TargetUnreachableError);
    expect(stranger.code).toBe("unreachable");
    expect(stranger.message).toMatch(/user_not_found/);
    const self = await rig.channel.resolveTarget({ user: fake.botUserId }).catch((e) => e);
    expect(self).toBeInstanceOf(TargetUnreachableError);
    expect(self.message).toMatch(/cannot_dm_bot/);
    // A refused target is not the channel's trouble: status keeps no error for it.
    expect(rig.channel.status().lastError ?? null).toBeNull();
  });

  it("keeps other failures as their own typed errors", async () => {
    fake.api.httpErrorNext("conversations.open", 503);
    const err = await rig.channel.resolveTarget({ user: "U0001" }).catch((e) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect(err).not.toBeInstanceOf(TargetUnreachableError);
    expect(err.code).toBe("platform_unavailable");
  });
});

describe("slack resolveTarget: conversations", () => {
  it("resolves a channel thread to the key its replies get, and posts into the thread", async () => {
    const ts = await fake.mention("start here");
    const ref = await rig.channel.resolveTarget({ chat: "C0001", thread: ts });
    expect(ref).toMatchObject({ key: rig.inbox[0]!.ref.key, chatId: "C0001", threadId: ts, chatType: "group" });
    await rig.channel.send(ref, { text: "A follow-up from a schedule." });
    expect(fake.botMessages("C0001", ts).map((m) => m.text)).toEqual(["A follow-up from a schedule."]);
    // The bot spoke in the thread: a reply there without a mention is addressed to it, in the same conversation.
    await fake.say("ok, noted", { channel: "C0001", threadTs: ts });
    expect(rig.inbox.at(-1)).toMatchObject({ mentioned: true, ref: { key: ref.key } });
  });

  it("posts at the top of a channel when no thread is named", async () => {
    const ref = await rig.channel.resolveTarget({ chat: "C0001" });
    expect(ref).toMatchObject({ key: "slack:T0001:C0001", chatType: "group" });
    expect(ref.threadId).toBeUndefined();
    await rig.channel.send(ref, { text: "Deploy finished." });
    const [posted] = fake.botMessages("C0001");
    expect(posted).toMatchObject({ text: "Deploy finished." });
    expect(posted!.threadId).toBeUndefined();
  });

  it("treats a DM channel id as the DM: one key, the thread only places the message", async () => {
    const first = await fake.dm("hi");
    const ref = await rig.channel.resolveTarget({ chat: "D0001", thread: first });
    expect(ref).toMatchObject({ key: rig.inbox[0]!.ref.key, chatType: "direct", threadId: first });
    // Without conversations.info (no read scope) the id alone tells a DM.
    fake.api.failNext("conversations.info", "missing_scope");
    expect((await rig.channel.resolveTarget({ chat: "D0001" })).chatType).toBe("direct");
  });

  it("keys by the workspace the caller names", async () => {
    const ref = await rig.channel.resolveTarget({ chat: "C0001", thread: "1.2", workspace: "T0777" });
    expect(ref).toMatchObject({ key: "slack:T0777:C0001:1.2", workspace: "T0777" });
  });

  it("refuses unknown and archived channels, and sends where the bot was removed, as unreachable", async () => {
    const unknown = await rig.channel.resolveTarget({ chat: "C4040" }).catch((e) => e);
    expect(unknown).toBeInstanceOf(TargetUnreachableError);
    expect(unknown.message).toMatch(/channel_not_found/);
    fake.workspace.addChannel("C0500");
    fake.workspace.archive("C0500");
    const archived = await rig.channel.resolveTarget({ chat: "C0500" }).catch((e) => e);
    expect(archived).toBeInstanceOf(TargetUnreachableError);
    expect(archived.message).toMatch(/is_archived/);
    const ref = await rig.channel.resolveTarget({ chat: "C0777" });
    fake.workspace.removeBot("C0777");
    const sent = await rig.channel.send(ref, { text: "anyone?" }).catch((e) => e);
    expect(sent).toBeInstanceOf(TargetUnreachableError);
    expect(sent.message).toMatch(/not_in_channel/);
    const shared = await rig.channel.sendFile(ref, file).catch((e) => e);
    expect(shared).toBeInstanceOf(TargetUnreachableError);
    expect(fake.botMessages("C0777")).toEqual([]);
  });
});
