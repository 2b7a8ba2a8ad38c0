/** AI cards: streaming, finalize/error, buttons and their clicks, against the fake DingTalk. */
import { afterEach, describe, expect, it } from "vitest";
import type { ConversationRef } from "../../src/channels/types.js";
import { PlatformRateLimitError } from "../../src/errors.js";
import { BOB } from "../fakes/dingtalk/index.js";
import { type Rig, startRig, TEMPLATE, until } from "../fakes/dingtalk/rig.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const CARDS = { card_template_id: TEMPLATE, card_buttons_key: "buttons", edit_interval_ms: 50 };

async function refFrom(r: Rig, group?: string): Promise<ConversationRef> {
  const before = r.inbox.length;
  await r.fake.userSays("question", group ? { group } : {});
  await until(() => r.inbox.length > before, "the inbound message");
  return r.inbox.at(-1)!.ref;
}

describe("dingtalk AI card streaming", () => {
  it("streams full text into the card and finalizes it with the exact final text", async () => {
    rig = await startRig(CARDS);
    expect(rig.channel.capabilities).toMatchObject({ edits: true, buttons: true, minEditIntervalMs: 50 });
    const ref = await refFrom(rig);
    const stream = await rig.channel.startStream(ref);
    expect(stream).toBeDefined();
    await stream!.update("Hello");
    await stream!.update("Hello, wor");
    await stream!.update("Hello, wor");
    await stream!.finish("Hello, **world**.");
    const [card] = rig.fake.messagesIn(rig.fake.dmId());
    expect(card).toMatchObject({ kind: "card", id: stream!.handle.id, text: "Hello, world." });
    expect(card!.card).toMatchObject({ flowStatus: "3", streamed: 3 });
    expect(card!.versions.map((v) => v.text)).toEqual(["", "Hello", "Hello, wor", "Hello, world."]);
    const create = rig.fake.calls.find((c) => c.api === "card.create")!.body as Record<string, unknown>;
    expect(create).toMatchObject({
      cardTemplateId: TEMPLATE,
      openSpaceId: "dtv1.card//IM_ROBOT.staff-alice",
      callbackType: "STREAM",
    });
    const streams = rig.fake.calls.filter((c) => c.api === "card.stream").map((c) => c.body as Record<string, unknown>);
    expect(streams.every((b) => b.isFull === true && b.key === "content")).toBe(true);
    expect(new Set(streams.map((b) => b.guid)).size).toBe(streams.length);
    expect(streams.at(-1)).toMatchObject({ isFinalize: true, isError: false });
  });

  it("marks the card failed on abort and never throws from abort", async () => {
    rig = await startRig(CARDS);
    const ref = await refFrom(rig, "cid-group-1");
    const stream = await rig.channel.startStream(ref);
    await stream!.update("partial");
    await stream!.abort("partial (failed)");
    const card = rig.fake.messagesIn("cid-group-1")[0]!;
    expect(card.card?.flowStatus).toBe("5");
    expect(card.text).toBe("partial (failed)");
    const create = rig.fake.calls.find((c) => c.api === "card.create")!.body as Record<string, unknown>;
    expect(create).toMatchObject({
      openSpaceId: "dtv1.card//IM_GROUP.cid-group-1",
      imGroupOpenDeliverModel: { robotCode: "ding-app-key" },
    });
    // The stream ended; a second abort is refused by DingTalk but must not throw.
    await expect(stream!.abort("again")).resolves.toBeUndefined();
    // The renderer's fallback after an abort: edit the card with the text so far.
    await rig.channel.edit(stream!.handle, { text: "partial, then recovered" });
    expect(card.text).toBe("partial, then recovered");
    expect(card.card?.flowStatus).toBe("3");
  });

  it("maps QpsLimitForApi on a streaming update to PlatformRateLimitError", async () => {
    rig = await startRig(CARDS);
    const ref = await refFrom(rig);
    const stream = await rig.channel.startStream(ref);
    rig.fake.fail("card.stream", "qps");
    const err = await stream!.update("too soon").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformRateLimitError);
    expect((err as PlatformRateLimitError).retryAfterMs).toBe(1000);
    await stream!.update("too soon");
    expect(rig.fake.messagesIn(rig.fake.dmId())[0]!.text).toBe("too soon");
  });

  it("has no native stream without a template", async () => {
    rig = await startRig();
    const ref = await refFrom(rig);
    await expect(rig.channel.startStream(ref)).resolves.toBeUndefined();
  });
});

describe("dingtalk card buttons", () => {
  it("shows buttons, turns a click into an action for the asker's conversation, and removes them on edit", async () => {
    rig = await startRig(CARDS);
    expect(rig.fake.gateway.subscriptions.map((s) => s.topic)).toContain("/v1.0/card/instances/callback");
    const ref = await refFrom(rig, "cid-group-1");
    const buttons = [
      { id: "1", label: "Red" },
      { id: "2", label: "Blue" },
    ];
    const handle = await rig.channel.send(ref, { text: "Which colour?", buttons, questionId: "q42" });
    const card = rig.fake.messagesIn("cid-group-1")[0]!;
    expect(card.buttons.map((b) => b.text)).toEqual(["Red", "Blue"]);
    const messageId = rig.fake.click("Blue", BOB);
    await until(() => rig!.fake.gateway.acked(messageId), "the click ack");
    const click = rig.inbox.at(-1)!;
    expect(click).toMatchObject({
      eventId: `card:${messageId}`,
      text: "",
      user: { id: "staff-bob" },
      action: { questionId: "q42", buttonId: "2", messageId: handle.id },
      ref: { key: ref.key, chatId: "cid-group-1", chatType: "group" },
    });
    await rig.channel.edit(handle, { text: "Which colour? → Blue", buttons: [] });
    expect(card.buttons).toEqual([]);
    expect(card.text).toBe("Which colour? → Blue");
  });

  it("rebuilds the click's conversation from the button params after a restart", async () => {
    rig = await startRig(CARDS);
    const ref = await refFrom(rig);
    await rig.channel.send(ref, { text: "Pick", buttons: [{ id: "1", label: "Yes" }], questionId: "q1" });
    await rig.channel.stop();
    const sink = rig.inbox;
    await rig.channel.start(async (m) => {
      sink.push(m);
    });
    const messageId = rig.fake.click("Yes");
    await until(() => rig!.fake.gateway.acked(messageId), "the click ack");
    expect(sink.at(-1)).toMatchObject({
      action: { questionId: "q1", buttonId: "1" },
      ref: { key: "dingtalk:ding-corp-1:staff-alice", chatType: "direct", extra: { staffId: "staff-alice" } },
    });
  });

  it("turns buttons off for templates without a button variable and in HTTP mode", async () => {
    rig = await startRig({ card_template_id: TEMPLATE });
    expect(rig.channel.capabilities).toMatchObject({ edits: true, buttons: false });
    expect(rig.fake.gateway.subscriptions.map((s) => s.topic)).toEqual(["/v1.0/im/bot/messages/get"]);
    await rig.close();
    rig = await startRig({ ...CARDS, mode: "webhook" });
    expect(rig.channel.capabilities).toMatchObject({ edits: true, buttons: false });
  });
});
