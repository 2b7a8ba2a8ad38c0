/**
 * Issue 32's progress view end to end where the platform shows it itself: a whole gateway
 * (dispatcher, reply writer, SQLite, embedded agent on the mock model) with `gateway.progress:
 * full`, three slow tool calls, and the fakes that say what a person sees and refuse what the
 * platforms refuse. Slack's native stream shows task cards and the summary line; Feishu's CardKit
 * card a panel under the text, within CardKit's 10 operations a second; DingTalk's AI card the
 * template's progress variable.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eventually, freePort, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { FakeDingTalk } from "../fakes/dingtalk/index.js";
import { FeishuDriver } from "../fakes/feishu/driver.js";
import { DM_CHAT } from "../fakes/feishu/index.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { slackConfigFor } from "../fakes/slack/rig.js";
import { ANSWER, enqueueThreeToolRun, slowTools } from "../helpers/progress-run.js";

const SUMMARY = /^3 tools, \d+(\.\d)? s$/;

const closers: Array<() => Promise<unknown>> = [];
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  for (const close of closers.splice(0)) await close();
});

async function boot(channels: Record<string, Record<string, unknown>>, port: number): Promise<TestGateway> {
  gw = await startTestGateway({ channels, port, tools: slowTools(), gateway: { progress: "full" } });
  enqueueThreeToolRun(gw.model);
  return gw;
}

describe("the progress view end to end, shown by the platform", () => {
  it("slack: a channel thread's stream shows three ✓ task cards, the step as the status line, the summary under the reply", async () => {
    const fake = await FakeSlack.start({ mode: "socket" });
    closers.push(() => fake.close());
    const port = await freePort();
    await boot({ slack: { enabled: true, ...slackConfigFor(fake, { edit_interval_ms: 200 }) } }, port);
    const root = await fake.mention("how does pagination work?");
    const reply = await eventually(
      () => fake.botMessages("C0001", root).find((m) => !m.streaming && m.text.startsWith("Let me look.")),
      30_000,
      "the finished reply",
    );
    const [text, summary] = reply.text.split("\n");
    expect(text).toBe(`Let me look. ${ANSWER}`);
    expect(summary).toMatch(/^✓ 3 tools, /);
    expect(reply.tasks?.map((t) => [t.title, t.status])).toEqual([
      ["web_search", "complete"],
      ["fetch_url", "complete"],
      ["run_tests", "complete"],
    ]);
    expect(reply.tasks?.every((t) => t.history.join(">") === "in_progress>complete")).toBe(true);
    expect(reply.tasks?.[0]?.details).toBe('"antler pagination"');
    const statuses = fake.api.statuses.filter((s) => s.threadTs === root).map((s) => s.status);
    expect(statuses).toContain("Searching the web…");
    expect(statuses.at(-1)).toBe("");
    expect(fake.api.calls.filter((c) => c.method === "chat.appendStream")).not.toHaveLength(0);
  });

  it("feishu: the CardKit card shows a panel with three ✓ rows while the run goes, folds to the summary, within CardKit's pace", async () => {
    const driver = await FeishuDriver.start({ mode: "websocket" });
    closers.push(() => driver.close());
    const port = await freePort();
    await boot({ feishu: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) }, port);
    await driver.fake.userSays({ text: "how does pagination work?" });
    const reply = await eventually(
      () => driver.fake.botMessages(DM_CHAT).find((m) => m.text === `Let me look. ${ANSWER}` && m.notes?.[0]?.startsWith("▸")),
      30_000,
      "the finished reply",
    );
    const [folded] = reply.notes ?? [];
    expect(folded?.slice(4)).toMatch(SUMMARY);
    const notes = reply.versions.map((v) => v.notes ?? []);
    expect(notes.some((n) => n.filter((line) => line.startsWith("✓ ")).length === 3)).toBe(true);
    expect(notes.some((n) => n.includes('⏳ run_tests · "api"'))).toBe(true);
    expect(driver.fake.world.rateLimited(), "no CardKit operation over the limit").toEqual([]);
    const card = driver.fake.world.cards.get(reply.cardId ?? "");
    const seqs = card?.sequences ?? [];
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
  });

  it("dingtalk: the AI card's progress variable shows three ✓ rows while the run goes, then the summary alone", async () => {
    const fake = await FakeDingTalk.start({
      templates: { tpl: { contentKey: "content", progressKey: "progress" } },
    });
    closers.push(() => fake.close());
    const port = await freePort();
    const dingtalk = {
      enabled: true,
      mode: "stream",
      ...fake.connection(),
      edit_interval_ms: 100,
      card_template_id: "tpl",
      card_progress_key: "progress",
    };
    await boot({ dingtalk }, port);
    await fake.userSays("how does pagination work?");
    const card = await eventually(
      () => fake.messagesIn(fake.dmId()).find((m) => m.card?.flowStatus === "3" && m.notes?.length === 1),
      30_000,
      "the finished card",
    );
    expect(card.text).toBe(`Let me look. ${ANSWER}`);
    expect(card.notes?.[0]?.slice(2)).toMatch(SUMMARY);
    const notes = card.versions.map((v) => v.notes ?? []);
    expect(notes.some((n) => n.filter((line) => line.startsWith("✓ ")).length === 3)).toBe(true);
  });
});
