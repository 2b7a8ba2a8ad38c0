/**
 * Follow-up and progress settings: the layers (gateway, channel, route, the chat's /queue pick),
 * the config's shorthand, and /queue as a user uses it, kept across a restart.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/types.js";
import { followupSettings, progressSettings } from "../../src/config/followups.js";
import { AppConfigSchema } from "../../src/config/schema.js";
import { collectedMessage } from "../../src/core/followups/collect.js";
import { eventually, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";

let running: TestGateway[] = [];
afterEach(async () => {
  for (const gw of running) await gw.stop(true).catch(() => undefined);
  running = [];
});

describe("follow-up settings", () => {
  it("merges gateway, channel and route layers key by key, the most specific last", () => {
    expect(followupSettings()).toEqual({ mode: "queue", debounce_ms: 1500, max_followups: 10, allow_command: true });
    const merged = followupSettings({ mode: "collect", debounce_ms: 500 }, { max_followups: 3 }, { mode: "steer" });
    expect(merged).toEqual({ mode: "steer", debounce_ms: 500, max_followups: 3, allow_command: true });
  });

  it("keeps the summary in full and drops it in compact unless set", () => {
    expect(progressSettings()).toEqual({ mode: "compact", summary: false, show_reasoning: false });
    expect(progressSettings({ mode: "full" })).toMatchObject({ summary: true });
    expect(progressSettings({ mode: "full" }, { summary: false })).toMatchObject({ summary: false });
  });

  it("reads the shorthand, rejects unknown modes, and keeps the keys out of the channel's own schema", () => {
    const config = AppConfigSchema.parse({
      gateway: { followups: "collect", progress: "full" },
      routes: [{ agent: "default", chat: "1", followups: { mode: "interrupt" } }],
      channels: { telegram: { enabled: false, followups: { max_followups: 2 }, progress: { show_reasoning: true } } },
    });
    expect(config.gateway.followups).toEqual({ mode: "collect" });
    expect(config.gateway.progress).toEqual({ mode: "full" });
    expect(config.routes[0]?.followups).toEqual({ mode: "interrupt" });
    expect(config.channels.telegram?.followups).toEqual({ max_followups: 2 });
    expect(() => AppConfigSchema.parse({ gateway: { followups: { mode: "drop" } } })).toThrow();
    expect(() => AppConfigSchema.parse({ gateway: { progress: { mode: "loud" } } })).toThrow();
  });
});

describe("collected messages", () => {
  const msg = (eventId: string, text: string, user = "u1"): InboundMessage => ({
    channel: "loop",
    eventId,
    ref: { channel: "loop", key: "loop:w:dm1", chatId: "dm1", chatType: "direct", replyToId: eventId },
    user: { id: user, name: user.toUpperCase() },
    text,
    mentioned: true,
    sentAt: 0,
  });

  it("become one message: the first one's id and sender, the last one's place, each text listed in order", () => {
    const one = collectedMessage([msg("e1", "first"), msg("e2", "second"), msg("e3", "third")]);
    expect(one.eventId).toBe("e1");
    expect(one.ref.replyToId).toBe("e3");
    expect(one.text.split("\n").slice(1)).toEqual(["1. first", "2. second", "3. third"]);
    const two = collectedMessage([msg("e1", "hi", "u1"), msg("e2", "hello", "u2")]);
    expect(two.text).toContain("1. U1: hi");
    expect(two.text).toContain("2. U2: hello");
    expect(collectedMessage([msg("e1", "alone")]).text).toBe("alone");
  });
});

describe("/queue", () => {
  it("shows the mode, sets the chat's own, survives a restart, and goes back with /queue default", async () => {
    const world = new LoopbackWorld();
    const gw = await startTestGateway({ channels: { loop: world.channelConfig() }, gateway: { followups: { mode: "collect" } } });
    running.push(gw);
    const last = () => world.botMessages("dm1").at(-1)?.text ?? "";
    await world.userSays("/queue");
    await eventually(() => last().startsWith("Follow-up mode: collect."), 10_000, "the current mode");
    await world.userSays("/queue loud");
    await eventually(() => last().includes('no follow-up mode "loud"'), 10_000, "the refusal");
    await world.userSays("/queue Steer");
    await eventually(() => last().startsWith("Follow-up mode: steer."), 10_000, "the pick");
    await gw.stop(false);
    const again = await startTestGateway({
      channels: { loop: world.channelConfig() },
      gateway: { followups: { mode: "collect" } },
      dir: gw.dir,
      model: gw.model,
    });
    running.push(again);
    await world.userSays("/queue");
    await eventually(() => last().startsWith("Follow-up mode: steer."), 10_000, "the pick after a restart");
    await world.userSays("/queue default");
    await eventually(() => last().startsWith("Back to this chat's default follow-up mode: collect."), 10_000, "the reset");
  });

  it("refuses a change where the route does not allow one", async () => {
    const world = new LoopbackWorld();
    const gw = await startTestGateway({
      channels: { loop: world.channelConfig() },
      sections: { routes: [{ agent: "default", channel: "loop", followups: { mode: "interrupt", allow_command: false } }] },
    });
    running.push(gw);
    const last = () => world.botMessages("dm1").at(-1)?.text ?? "";
    await world.userSays("/queue collect");
    await eventually(() => last().includes("cannot be changed in this chat: it stays interrupt"), 10_000, "the refusal");
    await world.userSays("/queue");
    await eventually(() => last().includes("It cannot be changed in this chat."), 10_000, "the mode shown");
  });
});
