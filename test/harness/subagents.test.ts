/**
 * Subagents (`features.subagents`, the `task` tool) on the embedded harness from real config,
 * against the mock model: the per-run limit (the mock records how many calls were in flight at
 * once), the timeout, cancel, usage, and that a subagent's text is never reply text.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { type AgentHarness, createHarness } from "../../src/harness/index.js";
import type { ModelUsage } from "../../src/harness/usage.js";
import { eventually, sleep } from "../../src/testing/wait.js";
import {
  type ChatCompletionRequest,
  contentText,
  lastUserText,
  type MockModel,
  type MockReply,
  startMockModel,
} from "../fakes/openai.js";
import { collect, configFor, deltas, last, memoryLogger, tempDir } from "./helpers.js";

const SUB_PROMPT = "You are the researcher subagent.";
const LEAD_DONE = "All five topics are covered.";

let mock: MockModel | undefined;
let harness: AgentHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await mock?.close();
  harness = undefined;
  mock = undefined;
});

const isSubagent = (req: ChatCompletionRequest) => contentText(req.messages[0]?.content).includes(SUB_PROMPT);
const toolResults = (req: ChatCompletionRequest) => req.messages.filter((m) => m.role === "tool");

/** The lead calls `task` `count` times in one turn, then answers once the results are in. */
function lead(count: number) {
  return (req: ChatCompletionRequest): MockReply =>
    toolResults(req).length > 0
      ? { text: LEAD_DONE }
      : {
          toolCalls: Array.from({ length: count }, (_, i) => ({
            name: "task",
            args: { description: `Topic ${i + 1}`, prompt: `research topic ${i + 1}`, subagent_type: "researcher" },
          })),
        };
}

async function start(
  sub: (req: ChatCompletionRequest) => MockReply,
  count: number,
  subagents: Record<string, unknown> = {},
): Promise<{ usage: ModelUsage[] }> {
  mock = await startMockModel();
  mock.setDefault((req) => (isSubagent(req) ? sub(req) : lead(count)(req)));
  const config = configFor(mock, {
    agent: {
      features: { subagents: true },
      subagents: {
        max_concurrent: 3,
        agents: { researcher: { description: "Looks one topic up.", system_prompt: SUB_PROMPT } },
        ...subagents,
      },
    },
  });
  const usage: ModelUsage[] = [];
  harness = await createHarness({ config, baseDir: tempDir(), logger: memoryLogger().logger, onUsage: (u) => usage.push(u) });
  return { usage };
}

describe("subagents: the task tool", () => {
  it("five task calls with a limit of 3: never more than 3 subagents at work, all five answer, none of their text is the reply", async () => {
    const { usage } = await start((req) => ({ text: `SUBAGENT FINDING on ${lastUserText(req)}`, firstByteMs: 300 }), 5);
    const events = await collect(harness!.run("t-five", "cover five topics"));

    expect(last(events)).toMatchObject({ type: "done", text: LEAD_DONE });
    expect(deltas(events).join("")).toBe(LEAD_DONE);
    const subRequests = mock!.requests.filter(isSubagent);
    expect(subRequests).toHaveLength(5);
    expect(mock!.maxInFlight()).toBe(3);

    // The lead's second call reads each subagent's answer as its task's result.
    const final = mock!.requests.filter((r) => !isSubagent(r)).at(-1)!;
    const results = toolResults(final).map((m) => contentText(m.content));
    expect(results.sort()).toEqual([1, 2, 3, 4, 5].map((i) => `SUBAGENT FINDING on research topic ${i}`));

    // Two calls had to wait for a slot, and said so on their own rows.
    const starts = events.filter((e) => e.type === "tool_start" && e.name === "task").map((e) => (e as { id: string }).id);
    expect(starts).toHaveLength(5);
    const waited = events.filter((e) => e.type === "progress" && e.text.startsWith("waiting for a free slot"));
    expect(waited).toHaveLength(2);
    for (const w of waited) expect(starts).toContain((w as { id?: string }).id);

    const subUsage = usage.filter((u) => u.kind === "subagent");
    expect(subUsage).toHaveLength(5);
    expect(subUsage.every((u) => u.model === "mock" && u.totalTokens > 0)).toBe(true);
    expect(usage.filter((u) => u.kind === "chat")).toHaveLength(2);
  });

  it("a subagent's tool calls show as its task's progress, and its streamed text stays out of the reply", async () => {
    const { tool } = await import("@langchain/core/tools");
    const { z } = await import("zod");
    const lookup = tool(async ({ query }) => `found ${query}`, {
      name: "lookup",
      description: "Looks a thing up.",
      schema: z.object({ query: z.string() }),
    });
    mock = await startMockModel();
    mock.setDefault((req) => {
      if (!isSubagent(req)) return lead(1)(req);
      return toolResults(req).length > 0
        ? { text: "SUBAGENT SECRET: the answer is 42", chunkSize: 3, delayMs: 5 }
        : { toolCalls: [{ name: "lookup", args: { query: "antler pagination" } }] };
    });
    const config = configFor(mock, {
      agent: {
        features: { subagents: true },
        subagents: {
          agents: { researcher: { description: "Looks one topic up.", system_prompt: SUB_PROMPT, tools: ["lookup"] } },
        },
      },
    });
    harness = await createHarness({ config, baseDir: tempDir(), logger: memoryLogger().logger, tools: [lookup] });
    const events = await collect(harness.run("t-steps", "look it up"));

    expect(last(events)).toMatchObject({ type: "done", text: LEAD_DONE });
    expect(JSON.stringify(events.filter((e) => e.type === "text" || e.type === "done"))).not.toContain("SUBAGENT");
    const task = events.find((e) => e.type === "tool_start" && e.name === "task") as { id: string };
    const progress = events.filter((e) => e.type === "progress").map((e) => e as { text: string; id?: string });
    expect(progress).toContainEqual({ type: "progress", text: "lookup: antler pagination", id: task.id });
    // The subagent's tool ran inside it: the parent run has no tool row of its own for it.
    expect(events.some((e) => e.type === "tool_start" && e.name === "lookup")).toBe(false);
    const result = events.find((e) => e.type === "tool_end" && e.id === task.id) as { output: string; error: boolean };
    expect(result).toMatchObject({ output: "SUBAGENT SECRET: the answer is 42", error: false });
  });

  it("a subagent that runs out of time is stopped, and the model reads an error result", async () => {
    await start(() => ({ fault: "stall" }), 1, { timeout_ms: 300 });
    const events = await collect(harness!.run("t-slow", "one slow topic"));

    expect(last(events)).toMatchObject({ type: "done", text: LEAD_DONE });
    const end = events.find((e) => e.type === "tool_end" && e.name === "task") as { output: string; error: boolean };
    expect(end).toMatchObject({ error: true });
    expect(end.output).toBe("Error: subagent researcher timed out after 0.3 s and was stopped.");
    // The stalled call was aborted, not left hanging.
    expect(mock!.inFlight()).toBe(0);
  });

  it("cancel ends every subagent, those at work and those waiting: no call stays open, none starts later", async () => {
    await start(() => ({ fault: "stall" }), 5);
    const run = collect(harness!.run("t-stop", "five slow topics"));
    await eventually(() => mock!.inFlight() === 3, 10_000, "three subagents at work");
    expect(harness!.cancel("t-stop")).toBe(true);
    const events = await run;

    expect(last(events)).toMatchObject({ type: "error", code: "cancelled" });
    await eventually(() => mock!.inFlight() === 0, 5_000, "every subagent's call closed");
    const seen = mock!.requests.length;
    await sleep(500);
    expect(mock!.requests.length).toBe(seen);
    expect(mock!.requests.filter(isSubagent)).toHaveLength(3);
    // The thread still works.
    mock!.setDefault({ text: "fine again" });
    expect(last(await collect(harness!.run("t-stop", "hello")))).toMatchObject({ type: "done", text: "fine again" });
  });

  it("a subagent naming a tool its agent does not have is a config error at build time", async () => {
    mock = await startMockModel();
    const config = configFor(mock, {
      agent: {
        features: { subagents: true },
        subagents: { agents: { researcher: { description: "d", system_prompt: SUB_PROMPT, tools: ["no_such_tool"] } } },
      },
    });
    const built = createHarness({ config, baseDir: tempDir(), logger: memoryLogger().logger });
    await expect(built).rejects.toBeInstanceOf(ConfigError);
    await expect(built).rejects.toThrow(/subagents\.agents\.researcher\.tools\[0\]: the agent has no tool named "no_such_tool"/);
  });

  it("the config needs a subagent when the feature is on, and a subagent's model must exist", async () => {
    mock = await startMockModel();
    expect(() => configFor(mock!, { agent: { features: { subagents: true } } })).toThrow(
      /agent\.subagents\.agents: features\.subagents is on but no subagent is named/,
    );
    expect(() =>
      configFor(mock!, {
        agents: { helper: { subagents: { agents: { r: { description: "d", system_prompt: "p", model: "nope" } } } } },
      }),
    ).toThrow(/agents\.helper\.subagents\.agents\.r\.model: no model named "nope"/);
  });
});
