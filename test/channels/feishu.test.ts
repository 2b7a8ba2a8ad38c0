import { afterEach, describe, expect, it } from "vitest";
import { DM_CHAT, GROUP_CHAT, USER } from "../fakes/feishu/index.js";
import { type Rig, startRig } from "../fakes/feishu/rig.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

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
      ref: { key: `feishu:tenant_fake_1:${DM_CHAT}`, chatId: DM_CHAT, chatType: "direct", replyToId: d.messageId },
    });
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true, mode: "websocket" });
  });
});
