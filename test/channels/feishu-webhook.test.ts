import { afterEach, describe, expect, it } from "vitest";
import { AppConfigSchema } from "../../src/config/schema.js";
import { runDoctor } from "../../src/doctor.js";
import { createLogger } from "../../src/log/logger.js";
import { DM_CHAT } from "../fakes/feishu/index.js";
import { type Rig, startRig } from "../fakes/feishu/rig.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ENCRYPTED = { encryptKey: "enc-key-for-tests", verificationToken: "vtoken-for-tests" };

describe("feishu webhook mode", () => {
  it("answers the encrypted URL verification challenge", async () => {
    rig = await startRig({ mode: "webhook", fake: ENCRYPTED });
    const res = await rig.fake.verifyUrl({ unsigned: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ challenge: expect.any(String) });
    expect(rig.channel.status()).toMatchObject({ state: "running", connected: true, mode: "webhook" });
  });

  it("refuses a challenge with the wrong token", async () => {
    rig = await startRig({ mode: "webhook", fake: ENCRYPTED });
    const res = await rig.fake.postWebhook({ challenge: "x", token: "wrong", type: "url_verification" });
    expect(res.status).toBe(401);
  });

  it("decrypts, verifies and delivers an event; the answer is sent after the sink", async () => {
    rig = await startRig({ mode: "webhook", fake: ENCRYPTED });
    rig.onSink(() => new Promise((r) => setTimeout(r, 200)));
    const d = await rig.fake.userSays({ text: "over the webhook" });
    expect(d.webhook?.status).toBe(200);
    expect(d.webhook?.ms).toBeGreaterThanOrEqual(180);
    expect(rig.inbox[0]).toMatchObject({ eventId: d.eventId, text: "over the webhook", ref: { chatId: DM_CHAT } });
  });

  it("rejects tampered requests and records why in status", async () => {
    rig = await startRig({ mode: "webhook", fake: ENCRYPTED });
    expect((await rig.fake.userSays({ text: "a" }, { badSignature: true })).webhook?.status).toBe(401);
    expect((await rig.fake.userSays({ text: "b" }, { corrupt: true })).webhook?.status).toBe(400);
    expect((await rig.fake.userSays({ text: "c" }, { unsigned: true })).webhook?.status).toBe(401);
    const plain = await rig.fake.postWebhook({}, { encryptKey: undefined });
    expect(plain.status).toBe(400);
    expect(rig.inbox).toEqual([]);
    expect(rig.channel.status().lastError?.message).toMatch(/rejected/);
  });

  it("without an encrypt key, checks the verification token of plain events", async () => {
    rig = await startRig({ mode: "webhook", fake: { verificationToken: "plain-token" } });
    const ok = await rig.fake.userSays({ text: "plain" });
    expect(ok.webhook?.status).toBe(200);
    const forged = rig.fake.envelope("im.message.receive_v1", {});
    forged.header.token = "guess";
    expect((await rig.fake.deliver(forged)).webhook?.status).toBe(401);
    expect(rig.inbox.map((m) => m.text)).toEqual(["plain"]);
  });

  it("passes a redelivered event on with the same event id (the core dedupes)", async () => {
    rig = await startRig({ mode: "webhook", fake: ENCRYPTED });
    const d = await rig.fake.userSays({ text: "twice" });
    await rig.fake.redeliver(d.eventId);
    expect(rig.inbox.map((m) => m.eventId)).toEqual([d.eventId, d.eventId]);
  });

  it("refuses to start without a verification token or encrypt key", async () => {
    rig = await startRig({ mode: "webhook", noStart: true });
    await expect(rig.channel.start(async () => {})).rejects.toThrow(/verification_token or encrypt_key/);
  });

  it("unmounts its route on stop", async () => {
    rig = await startRig({ mode: "webhook", fake: ENCRYPTED });
    await rig.channel.stop();
    const d = await rig.fake.userSays({ text: "after stop" });
    // The route is down: 503 (deliver again later), not handled.
    expect(d.webhook?.status).toBe(503);
    expect(rig.channel.status().connected).toBe(false);
  });
});

describe("feishu secrets and doctor", () => {
  it("never writes the app secret to the log or status, even when it is refused", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "trace", format: "json", destination: { write: (l: string) => void lines.push(l) } });
    rig = await startRig({ noStart: true, logger, config: { app_secret: "wrong-secret-value" } });
    await rig.channel.start(async () => {}).catch(() => undefined);
    await rig.channel.check().catch(() => undefined);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("\n")).not.toContain("wrong-secret-value");
    expect(JSON.stringify(rig.channel.status())).not.toContain("wrong-secret-value");
  });

  it("antler doctor reports the bot through check()", async () => {
    rig = await startRig({ noStart: true });
    const o = rig.fake.options;
    const config = AppConfigSchema.parse({
      channels: { feishu: { enabled: true, app_id: o.appId, app_secret: o.appSecret, domain: rig.fake.url } },
    });
    const lines = await runDoctor({ config, baseDir: ".", path: "test.yaml" }, createLogger({ level: "silent" }));
    const line = lines.find((l) => l.subject === "channel feishu");
    expect(line).toMatchObject({ ok: true, detail: expect.stringMatching(/bot "Antler"/) });
  });
});
