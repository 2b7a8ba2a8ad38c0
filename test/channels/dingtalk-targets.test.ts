/** Sending first on DingTalk: resolved targets sent through the robot APIs of the fake. */
import { afterEach, describe, expect, it } from "vitest";
import { ChannelError, TargetUnreachableError } from "../../src/errors.js";
import { ALICE, BOB, type FakeUser } from "../fakes/dingtalk/index.js";
import { type Rig, startRig, TEMPLATE, until } from "../fakes/dingtalk/rig.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const CORP = "ding-corp-1";
const GROUP = "cid-group-1";
const DAVE: FakeUser = { staffId: "staff-dave", senderId: "$:LWCP_v1:$dave", nick: "Dave" };

/** The key the adapter gives the next inbound message `say` produces. */
async function inboundKey(r: Rig, say: () => Promise<unknown> | undefined): Promise<string> {
  const before = r.inbox.length;
  await say();
  const msg = await until(() => r.inbox[before], "the inbound message");
  return msg.ref.key;
}

describe("dingtalk resolveTarget", () => {
  it("reaches a person by staff id through oToMessages/batchSend, under the key their DM gets", async () => {
    rig = await startRig({ corp_id: CORP });
    const ref = await rig.channel.resolveTarget({ user: BOB.staffId });
    expect(ref).toMatchObject({ chatType: "direct", workspace: CORP, extra: { staffId: BOB.staffId } });
    expect(ref.extra?.sessionWebhook).toBeUndefined();
    await rig.channel.send(ref, { text: "**Reminder**: standup" });
    const shown = rig.fake.messagesIn(rig.fake.dmId(BOB));
    expect(shown.map((m) => [m.via, m.markdown])).toEqual([["robot", "**Reminder**: standup"]]);
    const sent = rig.fake.calls.find((c) => c.api === "robot.dm");
    expect(sent?.body).toMatchObject({ robotCode: rig.fake.robotCode, userIds: [BOB.staffId], msgKey: "sampleMarkdown" });
    const key = await inboundKey(rig, () => rig?.fake.userSays("thanks", { user: BOB }));
    expect(ref.key).toBe(key);
  });

  it("posts into a group through groupMessages/send, under the group's key (session_scope chat)", async () => {
    rig = await startRig({ corp_id: CORP, session_scope: "chat" });
    const ref = await rig.channel.resolveTarget({ chat: GROUP });
    await rig.channel.send(ref, { text: "deploy done" });
    expect(rig.fake.messagesIn(GROUP).map((m) => [m.via, m.markdown])).toEqual([["robot", "deploy done"]]);
    const key = await inboundKey(rig, () => rig?.fake.userSays("nice", { group: GROUP, user: ALICE }));
    expect(ref.key).toBe(key);
  });

  it("with session_scope user, a group thread names the member whose conversation it is", async () => {
    rig = await startRig({ corp_id: CORP });
    const ref = await rig.channel.resolveTarget({ chat: GROUP, thread: ALICE.staffId });
    const key = await inboundKey(rig, () => rig?.fake.userSays("me", { group: GROUP, user: ALICE }));
    expect(ref.key).toBe(key);
    const whole = await rig.channel.resolveTarget({ chat: GROUP });
    expect(whole.key).toBe(`dingtalk:${CORP}:${GROUP}`);
  });

  it("takes the corp id from the target's workspace, and asks for corp_id without either", async () => {
    rig = await startRig();
    const ref = await rig.channel.resolveTarget({ user: ALICE.staffId, workspace: CORP });
    const key = await inboundKey(rig, () => rig?.fake.userSays("hi"));
    expect(ref.key).toBe(key);
    const missing = rig.channel.resolveTarget({ user: ALICE.staffId });
    await expect(missing).rejects.toBeInstanceOf(ChannelError);
    await expect(missing).rejects.toThrow(/corp_id/);
  });

  it("sends a file to a resolved person through the robot API", async () => {
    rig = await startRig({ corp_id: CORP });
    const ref = await rig.channel.resolveTarget({ user: BOB.staffId });
    const data = new TextEncoder().encode("weekly numbers");
    await rig.channel.sendFile(ref, { name: "report.txt", mime: "text/plain", data, kind: "file" });
    expect(rig.fake.filesIn(rig.fake.dmId(BOB)).map((f) => f.name)).toEqual(["report.txt"]);
  });

  it("streams into an AI card for a resolved person (no sessionWebhook needed)", async () => {
    rig = await startRig({ corp_id: CORP, card_template_id: TEMPLATE });
    const ref = await rig.channel.resolveTarget({ user: BOB.staffId });
    await rig.channel.send(ref, { text: "card hello" });
    expect(rig.fake.messagesIn(rig.fake.dmId(BOB)).map((m) => m.card !== undefined)).toEqual([true]);
  });
});

describe("dingtalk unreachable targets", () => {
  it("a staff id DingTalk lists as invalid is TargetUnreachableError, and nothing is posted", async () => {
    rig = await startRig({ corp_id: CORP });
    const ref = await rig.channel.resolveTarget({ user: DAVE.staffId });
    const sent = rig.channel.send(ref, { text: "hello?" });
    await expect(sent).rejects.toBeInstanceOf(TargetUnreachableError);
    await expect(sent).rejects.toThrow(/invalidStaffIdList/);
    expect(rig.fake.messagesIn(rig.fake.dmId(DAVE))).toEqual([]);
  });

  it("an unknown group is TargetUnreachableError with DingTalk's code", async () => {
    rig = await startRig({ corp_id: CORP });
    const ref = await rig.channel.resolveTarget({ chat: "cid-nowhere" });
    const sent = rig.channel.send(ref, { text: "hello?" });
    await expect(sent).rejects.toBeInstanceOf(TargetUnreachableError);
    await expect(sent).rejects.toThrow(/invalid\.openConversationId/);
  });

  it("a reply to an inbound message still goes through its sessionWebhook", async () => {
    rig = await startRig({ corp_id: CORP });
    await rig.fake.userSays("hello");
    const msg = await until(() => rig?.inbox[0], "the inbound message");
    await rig.channel.send(msg.ref, { text: "hi back" });
    expect(rig.fake.messagesIn(rig.fake.dmId(ALICE)).map((m) => m.via)).toEqual(["webhook"]);
  });
});
