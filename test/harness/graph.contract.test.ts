/**
 * The `graph` backend: a user's own graph, loaded by reflection from `agent.graph` relative to
 * the config file, passes the harness contract; other graphs' interrupts become questions; a bad
 * path is one config error naming agent.graph.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/loader.js";
import { ConfigError } from "../../src/errors.js";
import { createAgentBackend } from "../../src/harness/index.js";
import type { Harness } from "../../src/harness/types.js";
import { harnessContract } from "../../src/testing/index.js";
import { type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";
import { collect, deltas, last, memoryLogger, subjectOver, tempDir } from "./helpers.js";

const FIXTURES = path.join(import.meta.dirname, "fixtures");

async function graphHarness(mock: MockModel, graph: string): Promise<Harness> {
  const storage = path.join(tempDir(), "antler.db");
  const config = parseConfig(
    stringify({ storage: { path: storage }, models: [mockModelConfig(mock)], agent: { backend: "graph", graph } }),
    {},
  );
  return createAgentBackend({ config, baseDir: FIXTURES, logger: memoryLogger().logger });
}

harnessContract("graph (a createAgent factory)", () => subjectOver((mock) => graphHarness(mock, "./user-graphs.ts:agent")));

describe("graph backend", () => {
  it("a hand-written graph's interrupt value becomes a text question, and the answer resumes it", async () => {
    const mock = await startMockModel();
    const harness = await graphHarness(mock, "./user-graphs.ts:publish");
    try {
      const first = await collect(harness.run("t1", "ship it"));
      expect(last(first)).toMatchObject({ type: "clarification", question: "Publish the draft to the blog?", options: [] });
      expect((await harness.getThread("t1"))?.pending?.question).toBe("Publish the draft to the blog?");
      const second = await collect(harness.resume("t1", "yes"));
      // No model wrote this reply: the node's output is the reply.
      expect(deltas(second).join("")).toBe("Published (answer: yes).");
      expect(last(second)).toMatchObject({ type: "done", text: "Published (answer: yes)." });
      expect(mock.requests).toHaveLength(0);
    } finally {
      await harness.close();
      await mock.close();
    }
  });

  it("a graph compiled without a checkpointer gets Antler's, so its threads outlive the harness", async () => {
    const mock = await startMockModel();
    const storage = path.join(tempDir(), "antler.db");
    const config = parseConfig(
      stringify({
        storage: { path: storage },
        models: [mockModelConfig(mock)],
        agent: { backend: "graph", graph: "./user-graphs.ts:publish" },
      }),
      {},
    );
    const first = await createAgentBackend({ config, baseDir: FIXTURES, logger: memoryLogger().logger });
    const events = await collect(first.run("t1", "ship it"));
    expect(last(events), JSON.stringify(events)).toMatchObject({ type: "clarification" });
    await first.close();
    const second = await createAgentBackend({ config, baseDir: FIXTURES, logger: memoryLogger().logger });
    expect(last(await collect(second.resume("t1", "later")))).toMatchObject({ type: "done", text: "Published (answer: later)." });
    await second.close();
    await mock.close();
  });

  const bad: Array<[string, RegExp]> = [
    ["./no-such-file.ts:agent", /does not exist/],
    ["./user-graphs.ts:missing", /has no export "missing"/],
    ["./user-graphs.ts:notAGraph", /is not a compiled graph/],
    ["./user-graphs.ts", /expected the form/],
  ];
  for (const [spec, reason] of bad) {
    it(`agent.graph "${spec}" is one config error that names agent.graph and the fix`, async () => {
      const mock = await startMockModel();
      const failure = await graphHarness(mock, spec).catch((err: unknown) => err);
      await mock.close();
      expect(failure).toBeInstanceOf(ConfigError);
      const issues = (failure as ConfigError).issues;
      expect(issues).toHaveLength(1);
      expect(issues[0]?.path).toBe("agent.graph");
      expect(issues[0]?.message).toMatch(reason);
      expect(issues[0]?.message).toContain(spec);
    });
  }
});
