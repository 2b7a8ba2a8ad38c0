/**
 * Slack HTTP mode: the Events API endpoint mounted on Antler's HttpServer, with Bolt behind our
 * receiver. Signatures, replay window, url_verification, retries, interactivity, ack timing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeSlack } from "../fakes/slack/index.js";
import { type AdapterRig, adapterRig } from "../fakes/slack/rig.js";

let fake: FakeSlack;
let rig: AdapterRig;

beforeEach(async () => {
  fake = await FakeSlack.start({ mode: "webhook" });
  rig = await adapterRig(fake);
  await rig.start();
});

afterEach(async () => {
  await rig?.stop();
  await fake?.close();
});

const mentionEvent = () => ({
  type: "app_mention",
  user: "U0001",
  text: "<@UBOT> hi",
  ts: "1700000100.000100",
  channel: "C0001",
});

describe("slack http mode", () => {
  it("is connected once the route is mounted, without opening a socket", () => {
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true, mode: "webhook" });
    expect(fake.api.calls.some((c) => c.method === "apps.connections.open")).toBe(false);
  });

  it("answers url_verification with the challenge", async () => {
    const r = await fake.postRaw({ type: "url_verification", token: "t", challenge: "abc123" });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body ?? "{}")).toEqual({ challenge: "abc123" });
  });

  it("rejects a bad signature, a missing one, and a stale timestamp with 401, and runs nothing", async () => {
    const body = fake.envelope(mentionEvent());
    expect((await fake.postRaw(body, { wrongSecret: "not-the-secret" })).status).toBe(401);
    expect((await fake.postRaw(body, { unsigned: true })).status).toBe(401);
    const sixMinutesAgo = Math.floor(Date.now() / 1000) - 6 * 60;
    expect((await fake.postRaw(body, { timestamp: sixMinutesAgo })).status).toBe(401);
    expect(rig.inbox).toHaveLength(0);
    const fourMinutesAgo = Math.floor(Date.now() / 1000) - 4 * 60;
    expect((await fake.postRaw(body, { timestamp: fourMinutesAgo })).status).toBe(200);
    expect(rig.inbox).toHaveLength(1);
  });

  it("hands a retried delivery to the core with the same event id", async () => {
    await fake.mention("hello");
    const retry = await fake.redeliverLast();
    expect(retry.status).toBe(200);
    expect(rig.inbox.map((m) => m.eventId)).toEqual([rig.inbox[0]?.eventId, rig.inbox[0]?.eventId]);
  });

  it("answers only after the core recorded the message", async () => {
    rig.onInbound = () => new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    await fake.dm("slow");
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(fake.deliveries.at(-1)?.status).toBe(200);
  });

  it("answers 500 when the core cannot record it, so Slack retries", async () => {
    rig.onInbound = async () => {
      throw new Error("disk full");
    };
    await fake.dm("lost?");
    expect(fake.deliveries.at(-1)?.status).toBe(500);
  });

  it("answers 503 within Slack's 3 s when the core is stuck", async () => {
    rig.onInbound = () => new Promise((r) => setTimeout(r, 4000));
    const started = Date.now();
    await fake.dm("stuck");
    const took = Date.now() - started;
    expect(fake.deliveries.at(-1)?.status).toBe(503);
    expect(took).toBeLessThan(3000);
  });

  it("takes button clicks as signed form posts", async () => {
    const root = await fake.mention("pick");
    const ref = rig.inbox[0]!.ref;
    await rig.channel.send(ref, { text: "Which?", questionId: "q2", buttons: [{ id: "y", label: "Yes" }] });
    const click = await fake.click("Yes");
    expect(click.status).toBe(200);
    expect(rig.inbox.at(-1)).toMatchObject({
      action: { questionId: "q2", buttonId: "y" },
      ref: { key: `slack:T0001:C0001:${root}` },
    });
  });

  it("takes its route down on stop", async () => {
    await rig.channel.stop();
    const r = await fake.postRaw(fake.envelope(mentionEvent()));
    // The route is down: 503 + Retry-After, so Slack delivers again to a channel that is back.
    expect(r.status).toBe(503);
  });
});
