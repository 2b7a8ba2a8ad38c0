/**
 * `backend: "module:Export"`: a class implementing `Harness`, loaded by reflection relative to
 * the config file, passes the harness contract and is built with its context; a path that does
 * not name such a class is one config error naming the agent's `backend` key and the fix.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/loader.js";
import { ConfigError } from "../../src/errors.js";
import { AgentDirectory, createAgentBackend } from "../../src/harness/index.js";
import { harnessContract } from "../../src/testing/index.js";
import { type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";
import { OwnHarness } from "../fixtures/harness/own-harness.js";
import { collect, last, memoryLogger, subjectOver, tempDir } from "./helpers.js";

const FIXTURES = path.join(import.meta.dirname, "..", "fixtures", "harness");

function configWith(mock: MockModel, extra: Record<string, unknown>) {
  const storage = path.join(tempDir(), "antler.db");
  return parseConfig(stringify({ storage: { path: storage }, models: [mockModelConfig(mock)], ...extra }), {});
}

async function ownHarness(mock: MockModel, agent: Record<string, unknown>) {
  const config = configWith(mock, { agent });
  return createAgentBackend({ config, baseDir: FIXTURES, logger: memoryLogger().logger });
}

harnessContract("use: a Harness class of your own", () =>
  subjectOver((mock) => ownHarness(mock, { backend: "./own-harness.ts:OwnHarness" })),
);

describe("a backend of your own", () => {
  it("is built with its section, its options as written, the config, a logger and the config's folder", async () => {
    const mock = await startMockModel();
    const agent = { backend: "./own-harness.ts:OwnHarness", name: "mine", options: { region: "eu", retries: 2 } };
    const harness = await ownHarness(mock, agent);
    try {
      expect(harness).toBeInstanceOf(OwnHarness);
      const context = OwnHarness.contexts.at(-1);
      expect(context?.settings).toMatchObject({ backend: "./own-harness.ts:OwnHarness", name: "mine" });
      expect(context?.options).toEqual({ region: "eu", retries: 2 });
      expect(context?.config.models[0]?.base_url).toBe(mockModelConfig(mock).base_url);
      expect(context?.baseDir).toBe(FIXTURES);
      expect(typeof context?.logger.info).toBe("function");
      mock.enqueue({ text: "mine" });
      expect(last(await collect(harness.run("t1", "hi")))).toMatchObject({ type: "done", text: "mine" });
    } finally {
      await harness.close();
      await mock.close();
    }
  });

  it("serves a named agent too: agents.<name>.backend", async () => {
    const mock = await startMockModel();
    const config = configWith(mock, { agents: { own: { backend: "./own-harness.ts:OwnHarness", options: { n: 1 } } } });
    const directory = await AgentDirectory.open({ config, baseDir: FIXTURES, logger: memoryLogger().logger });
    try {
      expect(await directory.harness("default", "own")).toBeInstanceOf(OwnHarness);
      expect(OwnHarness.contexts.at(-1)?.options).toEqual({ n: 1 });
    } finally {
      await directory.close();
      await mock.close();
    }
  });

  const bad: Array<[string, RegExp]> = [
    ["./no-such-file.ts:OwnHarness", /does not exist/],
    ["./own-harness.ts:Missing", /has no export "Missing"/],
    ["./own-harness.ts:notAClass", /is not a class/],
    ["./own-harness.ts:HalfHarness", /is not a harness: it lacks resume\(\), cancel\(\), getThread\(\)/],
    ["./own-harness.ts:FailingHarness", /the harness constructor failed: no server configured/],
  ];
  for (const [spec, reason] of bad) {
    it(`agent.backend "${spec}" is one config error that names agent.backend and the fix`, async () => {
      const mock = await startMockModel();
      const failure = await ownHarness(mock, { backend: spec }).catch((err: unknown) => err);
      await mock.close();
      expect(failure).toBeInstanceOf(ConfigError);
      const issues = (failure as ConfigError).issues;
      expect(issues).toHaveLength(1);
      expect(issues[0]?.path).toBe("agent.backend");
      expect(issues[0]?.message).toMatch(reason);
      expect(issues[0]?.message).toContain(spec);
    });
  }

  it("a named agent's bad class names agents.<name>.backend", async () => {
    const mock = await startMockModel();
    const config = configWith(mock, { agents: { own: { backend: "./own-harness.ts:HalfHarness" } } });
    const failure = await AgentDirectory.open({ config, baseDir: FIXTURES, logger: memoryLogger().logger }).catch(
      (err: unknown) => err,
    );
    await mock.close();
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).issues[0]?.path).toBe("agents.own.backend");
  });

  it("a backend that is neither built in nor a module:Export path is refused when the config loads", async () => {
    const mock = await startMockModel();
    const failure = (() => {
      try {
        return configWith(mock, { agent: { backend: "embeded" } });
      } catch (err) {
        return err;
      }
    })();
    await mock.close();
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).issues[0]).toMatchObject({ path: "agent.backend" });
    expect((failure as ConfigError).issues[0]?.message).toMatch(/embedded, graph, remote, or "module:Export"/);
  });
});
