/**
 * Issue 32's progress view end to end: a whole gateway (dispatcher, renderer, SQLite, embedded
 * agent on the mock model) with `gateway.progress: full`, on the fake Bot API with a strict edit
 * limit (an edit sooner than the interval after the last one gets 429).
 */
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { eventually, freePort, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { ALICE, TelegramDriver } from "../fakes/telegram/driver.js";

const INTERVAL = 250;
const TOOL_MS = 400;
const ANSWER = "The docs say pagination is cursor based, the fetch confirmed it, and all the tests pass on main.";

let driver: TelegramDriver | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await driver?.close();
  gw = undefined;
  driver = undefined;
});

/** A tool that takes a while, as real ones do. */
const slow = (name: string, schema: z.ZodObject<z.ZodRawShape>) =>
  tool(
    async () => {
      await sleep(TOOL_MS);
      return `${name} ok`;
    },
    { name, description: `The ${name} tool.`, schema },
  );

const TOOLS = [
  slow("web_search", z.object({ query: z.string() })),
  slow("fetch_url", z.object({ url: z.string() })),
  slow("run_tests", z.object({ suite: z.string() })),
];

/** The model's turns: three tool calls, one after another, then the answer. */
const SCRIPT = [
  { text: "Let me look. ", toolCalls: [{ name: "web_search", args: { query: "antler pagination" } }] },
  { toolCalls: [{ name: "fetch_url", args: { url: "https://example.com/docs" } }] },
  { toolCalls: [{ name: "run_tests", args: { suite: "api" } }] },
  { text: ANSWER, chunkSize: 4, delayMs: 25 },
];

describe("telegram: the progress view end to end", () => {
  it("progress full: every tool's row shows with ✓ in the edits, no edit is refused, the final text keeps the summary", async () => {
    driver = await TelegramDriver.start({ mode: "polling", editIntervalMs: INTERVAL });
    driver.fake.editGapMs = INTERVAL - 1;
    const port = await freePort();
    const channels = { telegram: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) };
    gw = await startTestGateway({ channels, port, tools: TOOLS, gateway: { progress: "full" } });
    gw.model.enqueue(...SCRIPT);
    await driver.userSays("how does pagination work?");

    const message = await eventually(
      () => driver!.fake.botMessages(ALICE.id).find((m) => m.text.startsWith(`Let me look. ${ANSWER}`)),
      30_000,
      "the final reply",
    );
    const versions = message.versions.map((v) => v.text);
    for (const row of ['✓ web_search · "antler pagination"', '✓ fetch_url · "https://example.com/docs"', '✓ run_tests · "api"']) {
      expect(
        versions.some((v) => v.includes(row)),
        `${row} in ${JSON.stringify(versions)}`,
      ).toBe(true);
    }
    expect(versions.some((v) => v.includes("⏳ run_tests"))).toBe(true);
    expect(message.text).toMatch(/\n\n3 tools, \d+(\.\d)? s$/);
    expect(message.text).not.toContain("✓");
    expect(driver.fake.tooFastEdits, "edits refused for coming too soon").toEqual([]);
    expect(driver.fake.calls.filter((c) => c.status === 429)).toEqual([]);
    for (let i = 1; i < message.versions.length; i++) {
      expect(message.versions[i]!.at - message.versions[i - 1]!.at).toBeGreaterThanOrEqual(INTERVAL - 1);
    }
    expect(driver.fake.botMessages(ALICE.id)).toHaveLength(1);
  });

  it("progress off: the same run shows nothing of its tools, in no edit and not at the end", async () => {
    driver = await TelegramDriver.start({ mode: "polling", editIntervalMs: INTERVAL });
    driver.fake.editGapMs = INTERVAL - 1;
    const port = await freePort();
    const channels = { telegram: { ...driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }), progress: "off" } };
    gw = await startTestGateway({ channels, port, tools: TOOLS, gateway: { progress: "full" } });
    gw.model.enqueue(...SCRIPT);
    await driver.userSays("how does pagination work?");
    const message = await eventually(
      () => driver!.fake.botMessages(ALICE.id).find((m) => m.text === `Let me look. ${ANSWER}`),
      30_000,
      "the final reply, without a summary",
    );
    // The channel's `off` wins over the gateway's `full`: no row, no status line, in any version.
    for (const v of message.versions) expect(v.text, v.text).not.toMatch(/⏳|✓|web_search|fetch_url|run_tests|Searching/);
    expect(driver.fake.tooFastEdits).toEqual([]);
  });
});
