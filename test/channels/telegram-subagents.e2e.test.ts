/**
 * Plan mode and subagents (issue 33) through a whole gateway on the fake Bot API, with the
 * embedded agent on the mock model and `gateway.progress: full`: the plan's steps and the
 * subagent's task row (with the subagent's own tool call) show in the reply's edits, the
 * subagent's text never does, and `/stop` ends every subagent of the run.
 */
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type ChatCompletionRequest, contentText, type MockReply } from "../../src/testing/mock-model.js";
import { eventually, freePort, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { ALICE, TelegramDriver } from "../fakes/telegram/driver.js";

const INTERVAL = 250;
const SUB_PROMPT = "You are the changelog subagent.";
const SECRET = "SUBAGENT NOTES: version 2 renamed the cursor field";
const ANSWER = "Version 2 renamed the cursor field; the docs agree, so pagination code needs one rename.";

let driver: TelegramDriver | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop(true);
  await driver?.close();
  gw = undefined;
  driver = undefined;
});

const lookup = tool(
  async ({ query }) => {
    // Longer than the wait before a reply with no text yet shows its progress view alone.
    await sleep(2_000);
    return `changelog entry for ${query}`;
  },
  { name: "lookup", description: "Looks the changelog up.", schema: z.object({ query: z.string() }) },
);

const isSubagent = (req: ChatCompletionRequest) => contentText(req.messages[0]?.content).includes(SUB_PROMPT);
const results = (req: ChatCompletionRequest) => req.messages.filter((m) => m.role === "tool").length;

const plan = (a: string, b: string, c: string) => ({
  name: "write_todos",
  args: {
    todos: [
      { content: "Read the changelog", status: a },
      { content: "Compare with the docs", status: b },
      { content: "Write the answer", status: c },
    ],
  },
});

/** The lead plans, hands the changelog to the subagent, updates the plan, then answers. */
function lead(req: ChatCompletionRequest): MockReply {
  switch (results(req)) {
    case 0:
      return { toolCalls: [plan("in_progress", "pending", "pending")] };
    case 1:
      return {
        toolCalls: [
          {
            name: "task",
            args: { description: "Read the changelog", prompt: "What changed in v2?", subagent_type: "changelog" },
          },
        ],
      };
    case 2:
      return { toolCalls: [plan("completed", "completed", "in_progress")] };
    default:
      // Slow to start, as models are: the updated plan shows before the text comes.
      return { text: ANSWER, chunkSize: 8, delayMs: 20, firstByteMs: 800 };
  }
}

/** The subagent looks the changelog up, then streams its notes (which only the lead reads). */
function subagent(req: ChatCompletionRequest): MockReply {
  return results(req) === 0
    ? { toolCalls: [{ name: "lookup", args: { query: "v2 pagination" } }] }
    : { text: SECRET, chunkSize: 4, delayMs: 10 };
}

async function start(sub: (req: ChatCompletionRequest) => MockReply, leadReply: (req: ChatCompletionRequest) => MockReply) {
  driver = await TelegramDriver.start({ mode: "polling", editIntervalMs: INTERVAL });
  const port = await freePort();
  const channels = { telegram: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) };
  gw = await startTestGateway({
    channels,
    port,
    tools: [lookup],
    gateway: { progress: "full" },
    agent: {
      features: { plan_mode: true, subagents: true },
      subagents: { agents: { changelog: { description: "Reads the changelog.", system_prompt: SUB_PROMPT, tools: ["lookup"] } } },
    },
  });
  gw.model.setDefault((req) => (isSubagent(req) ? sub(req) : leadReply(req)));
}

describe("telegram: plan mode and subagents in the progress view", () => {
  it("shows the plan's steps and the subagent's task row with its tool call; the subagent's text never reaches the chat", async () => {
    await start(subagent, lead);
    await driver!.userSays("did pagination change in v2?");

    const message = await eventually(
      () => driver!.fake.botMessages(ALICE.id).find((m) => m.text.startsWith(ANSWER)),
      30_000,
      "the final reply",
    );
    const versions = message.versions.map((v) => v.text);
    const seen = (line: string) =>
      expect(
        versions.some((v) => v.includes(line)),
        `${line} in ${JSON.stringify(versions)}`,
      ).toBe(true);
    // The plan: first with step one under way, later with two steps done.
    seen("☐ Read the changelog\n☐ Compare with the docs\n☐ Write the answer");
    seen("☑ Read the changelog\n☑ Compare with the docs\n☐ Write the answer");
    // The task row while the subagent works (its own tool call as its progress), then done.
    seen("⏳ subagent: Read the changelog · lookup: v2 pagination");
    seen("✓ subagent: Read the changelog");
    expect(message.text).toMatch(/\n\n1 task, \d+(\.\d)? s$/);

    for (const m of driver!.fake.botMessages(ALICE.id)) {
      for (const v of m.versions) expect(v.text).not.toContain("SUBAGENT NOTES");
    }
    // The lead did read the subagent's notes, as its task's result.
    const leadLast = gw!.model.requests.filter((r) => !isSubagent(r)).at(-1)!;
    expect(leadLast.messages.some((m) => m.role === "tool" && contentText(m.content) === SECRET)).toBe(true);
  });

  it("/stop ends every subagent of the run: no model call stays open and none starts after", async () => {
    const three = (req: ChatCompletionRequest): MockReply =>
      results(req) > 0
        ? { text: "never reached" }
        : {
            toolCalls: [1, 2, 3, 4].map((i) => ({
              name: "task",
              args: { description: `Part ${i}`, prompt: `part ${i}`, subagent_type: "changelog" },
            })),
          };
    await start(() => ({ fault: "stall" }), three);
    await driver!.userSays("four parts, please");
    const model = gw!.model;
    await eventually(() => model.inFlight() === 3, 15_000, "three subagents at work (the limit), the fourth waiting");

    await driver!.userSays("/stop");
    await eventually(() => model.inFlight() === 0, 10_000, "every subagent's model call closed");
    await eventually(
      () => driver!.fake.botMessages(ALICE.id).some((m) => /stop/i.test(m.text)),
      10_000,
      "the chat told that the reply was stopped",
    );
    const seen = model.requests.length;
    await sleep(600);
    expect(model.requests.length).toBe(seen);
    expect(model.requests.filter(isSubagent)).toHaveLength(3);
    // Nor did the lead get another turn: the run ended with the stop.
    expect(model.requests.filter((r) => !isSubagent(r) && results(r) > 0)).toEqual([]);
  });
});
