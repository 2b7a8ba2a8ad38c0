/**
 * Downloads that cannot hold a conversation: on every platform with files, a download that
 * never answers, and one whose body stalls after the headers, end at `media.download_timeout_ms`
 * with a notice naming the file, and the next message is answered; `/stop` during a download ends
 * it with the stopped notice. Each runs the real SDK against its fake, whose held request shows
 * that the adapter really ended the request rather than only stopped waiting for it.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ContractDriver } from "../src/testing/driver.js";
import { eventually, freePort, startTestGateway, type TestGateway } from "./contract/gateway.js";
import { dingTalkDriver } from "./fakes/dingtalk/driver.js";
import { DiscordDriver } from "./fakes/discord/driver.js";
import type { DownloadStall, DownloadStalls } from "./fakes/download-stalls.js";
import { FeishuDriver } from "./fakes/feishu/driver.js";
import { SlackDriver } from "./fakes/slack/driver.js";
import { TelegramDriver } from "./fakes/telegram/driver.js";

interface Rig {
  driver: ContractDriver;
  stalls: DownloadStalls;
}

const PLATFORMS: Array<[string, () => Promise<Rig>]> = [
  [
    "telegram",
    async () => {
      const driver = await TelegramDriver.start({ mode: "polling" });
      return { driver, stalls: driver.fake.downloadStalls };
    },
  ],
  [
    "slack",
    async () => {
      const driver = await SlackDriver.start({ mode: "socket", conversation: "dm" });
      return { driver, stalls: driver.fake.files.stalls };
    },
  ],
  [
    "feishu",
    async () => {
      const driver = await FeishuDriver.start({ mode: "websocket" });
      return { driver, stalls: driver.fake.world.downloadStalls };
    },
  ],
  [
    "dingtalk",
    async () => {
      const driver = await dingTalkDriver({ mode: "stream", cards: false, scope: "user" });
      return { driver, stalls: driver.fake.files.stalls };
    },
  ],
  [
    "discord",
    async () => {
      const driver = await DiscordDriver.start();
      return { driver, stalls: driver.fake.cdn.stalls };
    },
  ],
];

/** The limit the tests configure: short, so a test takes seconds. */
const LIMIT_MS = 1500;
/** How late the notice may come after the limit (the bound). */
const GRACE_MS = 2000;
const NOTES = Buffer.from("Agenda\n1. Budget\n2. Hiring\n3. Offsite\n");
const FILE = { kind: "file" as const, name: "notes.txt", mime: "text/plain", data: NOTES };
const STOPPED = "Stopped: the reply was cancelled.";

let gw: TestGateway | undefined;
let rig: Rig | undefined;
afterEach(async () => {
  await gw?.stop(true);
  await rig?.driver.close();
  gw = undefined;
  rig = undefined;
});

async function boot(start: () => Promise<Rig>, downloadTimeoutMs: number): Promise<Rig & { gw: TestGateway }> {
  rig = await start();
  const { driver } = rig;
  const port = await freePort();
  const channel = driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` });
  gw = await startTestGateway({
    channels: { [driver.channelName]: channel },
    port,
    sections: { media: { download_timeout_ms: downloadTimeoutMs } },
  });
  const running = gw;
  await eventually(() => running.gateway.slot(driver.channelName)?.report().state === "running", 15_000, "the channel running");
  return { ...rig, gw: running };
}

const texts = (driver: ContractDriver) => driver.botMessages().map((m) => m.text);

/** Sends the file, waits for its notice; returns the notice and how long after sending it came. */
async function noticeFor(driver: ContractDriver): Promise<{ text: string; ms: number }> {
  const sent = Date.now();
  await driver.userSendsFile!(FILE);
  const notice = await eventually(
    () => texts(driver).find((t) => t.includes(FILE.name)),
    LIMIT_MS + 15_000,
    "the download's notice",
  );
  return { text: notice, ms: Date.now() - sent };
}

/** The next message in the conversation gets its answer, after everything already shown. */
async function nextIsAnswered(r: { driver: ContractDriver; gw: TestGateway }): Promise<void> {
  const before = texts(r.driver).length;
  r.gw.model.enqueue({ text: "Still here." });
  await r.driver.userSays("are you there?");
  await eventually(() => texts(r.driver).slice(before).includes("Still here."), 15_000, "the next answer");
}

describe.each(PLATFORMS)("downloads with a time limit: %s", (_name, start) => {
  it.each<DownloadStall>(["no-answer", "body-stalls"])(
    "a download that %s gets its notice within the limit + 2 s, and the next message is answered",
    async (mode) => {
      const r = await boot(start, LIMIT_MS);
      r.stalls.next(mode);
      const notice = await noticeFor(r.driver);
      expect(r.stalls.held).toBe(1);
      expect(notice.text).toContain("I couldn't download “notes.txt” within 1.5 seconds. Please send it again.");
      expect(notice.ms).toBeGreaterThanOrEqual(LIMIT_MS);
      expect(notice.ms).toBeLessThan(LIMIT_MS + GRACE_MS);
      // The adapter ended the request itself, not only the wait for it.
      await eventually(() => r.stalls.abandoned === 1, 10_000, "the held request closed by the client");
      // A file-only message starts no run: the model was not asked.
      expect(r.gw.model.requests).toHaveLength(0);
      await nextIsAnswered(r);
    },
  );

  it("/stop during a download ends it with the stopped notice, and the next message is answered", async () => {
    // A limit far beyond the test, so only /stop can end the download.
    const r = await boot(start, 120_000);
    r.stalls.next("no-answer");
    await r.driver.userSendsFile!(FILE);
    await eventually(() => r.stalls.held === 1, 15_000, "the download under way");
    await r.driver.userSays("/stop");
    await eventually(() => texts(r.driver).some((t) => t.includes(STOPPED)), 10_000, "the stopped notice");
    await eventually(() => r.stalls.abandoned === 1, 10_000, "the held request closed by the client");
    expect(texts(r.driver).some((t) => t.includes(FILE.name))).toBe(false);
    await nextIsAnswered(r);
  });
});
