/**
 * `POST /api/send` through a whole gateway (SQLite, the outbox worker) on Slack, Feishu and
 * DingTalk, each against its fake: a chat and a person reached with the platform's own
 * formatting, the fake's message ids on the entry, unreachable targets refused or failed with
 * the platform's reason, replays posting nothing, and a file uploaded after the text.
 * Discord and the web chat: send-channels-discord-web.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { freePort, sleep, type TestGateway } from "../contract/gateway.js";
import { ALICE, BOB, FakeDingTalk, type FakeUser } from "../fakes/dingtalk/index.js";
import { FeishuDriver } from "../fakes/feishu/driver.js";
import { GROUP_CHAT } from "../fakes/feishu/index.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { parseMrkdwn } from "../fakes/slack/mrkdwn.js";
import { slackConfigFor } from "../fakes/slack/rig.js";
import { MARKDOWN, type SendClient, sendBody, sendGateway, VISIBLE } from "./send-client.js";

let gw: TestGateway | undefined;
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  for (const close of closers.splice(0)) await close();
});

async function gateway(channels: Record<string, Record<string, unknown>>, port?: number): Promise<SendClient> {
  const started = await sendGateway(channels, port);
  gw = started.gw;
  return started.api;
}

describe("slack", () => {
  async function boot(): Promise<{ fake: FakeSlack; api: SendClient }> {
    const fake = await FakeSlack.start({ mode: "socket" });
    closers.push(() => fake.close());
    const api = await gateway({ slack: { enabled: true, ...slackConfigFor(fake, { edit_interval_ms: 200 }) } });
    return { fake, api };
  }

  it("posts to a channel and to a member's DM in mrkdwn, and the entry shows Slack's ts", async () => {
    const { fake, api } = await boot();
    const inChannel = await api.settled(sendBody("slack", { chat: "C0001" }, MARKDOWN), "slack-chat");
    expect(inChannel).toMatchObject({ state: "sent", conversation: "slack:T0001:C0001" });
    // Posted in Slack's mrkdwn (the fake keeps the marks), which a person reads formatted.
    const posted = fake.botMessages("C0001");
    expect(posted.map((m) => m.text)).toEqual(["*Deploy* finished: build `42` is _live_"]);
    expect(posted.map((m) => parseMrkdwn(m.text).text)).toEqual([VISIBLE]);
    expect(posted[0]?.threadId).toBeUndefined();
    expect(inChannel.message_ids).toEqual([posted[0]?.id]);

    fake.workspace.users.add("U0042");
    const dm = await api.settled(sendBody("slack", { user: "U0042" }, "Your **weekly** report is ready."), "slack-dm");
    expect(dm.state).toBe("sent");
    const opened = fake.calls("conversations.open").at(-1) as { users?: string };
    expect(opened.users).toBe("U0042");
    const dmChannel = fake.api.messages.find((m) => m.byBot && m.channel.startsWith("D"))?.channel as string;
    expect(dmChannel).toMatch(/^D/);
    expect(fake.botMessages(dmChannel).map((m) => m.text)).toEqual(["Your *weekly* report is ready."]);
    expect(dm.message_ids).toEqual(fake.botMessages(dmChannel).map((m) => m.id));
    expect(dm.conversation).toBe(`slack:T0001:${dmChannel}`);
  });

  it("refuses a user Slack does not know with user_not_found, posting nothing", async () => {
    const { fake, api } = await boot();
    const refused = await api.send(sendBody("slack", { user: "U9999" }, "hello?"), "slack-stranger");
    expect(refused.status).toBe(422);
    expect(String(refused.body.error)).toMatch(/user_not_found/);
    // A channel the bot was removed from is only known at the post: the entry fails with Slack's code.
    fake.workspace.addChannel("C0500", { member: false });
    const removed = await api.settled(sendBody("slack", { chat: "C0500" }, "anyone?"), "slack-removed");
    expect(removed.state).toBe("failed");
    expect(String(removed.error)).toMatch(/not_in_channel/);
    await sleep(300);
    expect(fake.api.messages.filter((m) => m.byBot)).toEqual([]);
  });

  it("uploads a file after the text, with its bytes, and keeps both ids", async () => {
    const { fake, api } = await boot();
    const data = Buffer.from("week 12: 3 deploys, 0 incidents\n").toString("base64");
    const body = {
      channel: "slack",
      target: { chat: "C0001" },
      text: "The **weekly** numbers:",
      files: [{ name: "numbers.txt", mime: "text/plain", data }],
    };
    const shown = await api.settled(body, "slack-file");
    expect(shown.state).toBe("sent");
    expect(fake.botMessages("C0001").map((m) => m.text)).toEqual(["The *weekly* numbers:"]);
    const files = fake.botFiles("C0001");
    expect(files.map((f) => [f.name, Buffer.from(f.data).toString("base64")])).toEqual([["numbers.txt", data]]);
    expect(shown.message_ids).toEqual([fake.botMessages("C0001")[0]?.id, files[0]?.id]);
    const order = fake.api.calls
      .map((c) => c.method)
      .filter((m) => m === "chat.postMessage" || m === "files.completeUploadExternal");
    expect(order).toEqual(["chat.postMessage", "files.completeUploadExternal"]);
  });
});

describe("feishu", () => {
  async function boot(): Promise<{ driver: FeishuDriver; api: SendClient }> {
    const driver = await FeishuDriver.start({ mode: "websocket" });
    closers.push(() => driver.close());
    const port = await freePort();
    const api = await gateway({ feishu: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) }, port);
    return { driver, api };
  }

  it("posts into a group as a new topic and to a person by open_id, with Feishu's message ids", async () => {
    const { driver, api } = await boot();
    const group = await api.settled(sendBody("feishu", { chat: GROUP_CHAT }, MARKDOWN), "feishu-chat");
    expect(group.state).toBe("sent");
    const [posted] = driver.fake.botMessages(GROUP_CHAT);
    expect(driver.fake.botMessages(GROUP_CHAT)).toHaveLength(1);
    expect(posted?.text).toBe(VISIBLE);
    // Sent as Feishu's rich format, not the Markdown source as plain text.
    expect(posted?.msgType).not.toBe("text");
    expect(group.message_ids).toEqual([posted?.id]);
    // The message opened a topic: the entry names the topic's conversation.
    expect(group.conversation).toBe(`feishu:tenant_fake_1:${GROUP_CHAT}:${posted?.id}`);

    driver.fake.addPerson("ou_newcomer0000000001");
    const dm = await api.settled(sendBody("feishu", { user: "ou_newcomer0000000001" }, "Welcome **aboard**"), "feishu-dm");
    expect(dm.state).toBe("sent");
    const chat = driver.fake.world.people.get("ou_newcomer0000000001")?.p2pChat as string;
    expect(chat).toBeDefined();
    expect(driver.fake.botMessages(chat).map((m) => m.text)).toEqual(["Welcome aboard"]);
    expect(dm.message_ids).toEqual(driver.fake.botMessages(chat).map((m) => m.id));
    expect(dm.conversation).toBe(`feishu:tenant_fake_1:${chat}`);
  });

  it("refuses a chat the bot is not in with Feishu's reason, and a person out of reach fails", async () => {
    const { driver, api } = await boot();
    driver.fake.addChat("oc_elsewhere000000001", "group", false);
    const refused = await api.send(sendBody("feishu", { chat: "oc_elsewhere000000001" }, "hello?"), "feishu-outside");
    expect(refused.status).toBe(422);
    expect(String(refused.body.error)).toMatch(/not in chat oc_elsewhere/);
    // Feishu checks a person only when the message is sent: the entry fails with code 230013.
    driver.fake.addPerson("ou_hidden00000000001", false);
    const hidden = await api.settled(sendBody("feishu", { user: "ou_hidden00000000001" }, "hi"), "feishu-hidden");
    expect(hidden.state).toBe("failed");
    expect(String(hidden.error)).toMatch(/230013/);
    await sleep(300);
    expect(driver.fake.botMessages()).toHaveLength(0);
  });

  it("sends each part with a uuid, and a replayed request posts nothing new", async () => {
    const { driver, api } = await boot();
    const body = sendBody("feishu", { chat: GROUP_CHAT }, "Only **once**");
    const first = await api.settled(body, "feishu-once");
    expect(first.state).toBe("sent");
    const sends = driver.fake.world.calls.filter((c) => c.op === "send");
    expect(sends).toHaveLength(1);
    expect((sends[0]?.body as { uuid?: string } | undefined)?.uuid).toMatch(/^[A-Za-z0-9_.:-]{1,50}$/);
    const again = await api.send(body, "feishu-once");
    expect(again).toMatchObject({ status: 200, replayed: true, body: { id: first.id, state: "sent" } });
    await sleep(500);
    expect(driver.fake.botMessages(GROUP_CHAT).map((m) => m.text)).toEqual(["Only once"]);
  });
});

describe("dingtalk", () => {
  const DAVE: FakeUser = { staffId: "staff-dave", senderId: "$:LWCP_v1:$dave", nick: "Dave" };
  const GROUP = "cid-group-1";

  async function boot(): Promise<{ fake: FakeDingTalk; api: SendClient }> {
    const fake = await FakeDingTalk.start();
    closers.push(() => fake.close());
    const api = await gateway({ dingtalk: { enabled: true, ...fake.connection(), corp_id: fake.corpId } });
    return { fake, api };
  }

  it("posts markdown into a group and to a person by staff id through the robot APIs", async () => {
    const { fake, api } = await boot();
    const group = await api.settled(sendBody("dingtalk", { chat: GROUP }, MARKDOWN), "ding-chat");
    expect(group).toMatchObject({ state: "sent", conversation: `dingtalk:${fake.corpId}:${GROUP}` });
    const inGroup = fake.messagesIn(GROUP);
    // DingTalk's Markdown has no inline code and takes `*` for italics.
    expect(inGroup.map((m) => [m.via, m.markdown, m.text])).toEqual([
      ["robot", "**Deploy** finished: build 42 is *live*", VISIBLE],
    ]);
    expect(fake.calls.find((c) => c.api === "robot.group")?.body).toMatchObject({
      openConversationId: GROUP,
      msgKey: "sampleMarkdown",
    });
    expect(group.message_ids).toEqual([inGroup[0]?.queryKey]);

    const dm = await api.settled(sendBody("dingtalk", { user: BOB.staffId }, "**Reminder**: standup"), "ding-dm");
    expect(dm).toMatchObject({ state: "sent", conversation: `dingtalk:${fake.corpId}:${BOB.staffId}` });
    const shown = fake.messagesIn(fake.dmId(BOB));
    expect(shown.map((m) => [m.via, m.text])).toEqual([["robot", "Reminder: standup"]]);
    expect(dm.message_ids).toEqual([shown[0]?.queryKey]);
    expect(fake.messagesIn(fake.dmId(ALICE))).toEqual([]);
  });

  it("fails a staff id DingTalk cannot reach with invalidStaffIdList, posting nothing", async () => {
    const { fake, api } = await boot();
    // No call tells before the send: the entry is accepted, then fails with DingTalk's answer.
    const failed = await api.settled(sendBody("dingtalk", { user: DAVE.staffId }, "hello?"), "ding-dave");
    expect(failed.state).toBe("failed");
    expect(String(failed.error)).toMatch(/invalidStaffIdList/);
    expect(failed.error_code).toBe("unreachable");
    const unknownGroup = await api.settled(sendBody("dingtalk", { chat: "cid-nowhere" }, "hello?"), "ding-nowhere");
    expect(unknownGroup.state).toBe("failed");
    expect(String(unknownGroup.error)).toMatch(/invalid\.openConversationId/);
    await sleep(300);
    expect(fake.chat.messages).toEqual([]);
    // The same person, once in the organisation, is reached.
    fake.addStaff(DAVE);
    const later = await api.settled(sendBody("dingtalk", { user: DAVE.staffId }, "welcome"), "ding-dave-2");
    expect(later.state).toBe("sent");
    expect(fake.messagesIn(fake.dmId(DAVE)).map((m) => m.text)).toEqual(["welcome"]);
  });
});
