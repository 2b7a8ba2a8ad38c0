/**
 * What the log says about a model that fails, counted line by line: one warning per failed run
 * naming the cause once (not once per middleware layer, not once per retry), and "agent ready"
 * only when the model's endpoint answers.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createHarness } from "../../src/harness/index.js";
import { failureCause } from "../../src/harness/run-errors.js";
import { createLogger } from "../../src/log/logger.js";
import { eventually } from "../contract/gateway.js";
import { mockModelConfig, startMockModel } from "../fakes/openai.js";
import { collect, configFor, last, memoryLogger, tempDir } from "./helpers.js";

const WARN = 40;

/** A mock whose port was closed again: nothing listens there. */
async function goneModel() {
  const mock = await startMockModel();
  await mock.close();
  return mock;
}

describe("failure logs", () => {
  it("logs one warning line per failed model call, with the cause once and the retries summed up", async () => {
    const mock = await goneModel();
    const config = configFor(mock, { models: [{ ...mockModelConfig(mock), max_retries: 1 }] });
    const { logger, logs } = memoryLogger();
    const harness = await createHarness({ config, baseDir: tempDir(), logger });
    try {
      const end = last(await collect(harness.run("t1", "hello")));
      expect(end).toMatchObject({ type: "error", code: "model_error" });
      const failures = logs.filter((l) => l.level === WARN && l.msg === "run failed");
      expect(failures).toHaveLength(1);
      const line = failures[0]!;
      expect(line).toMatchObject({ code: "model_error", max_retries: 1 });
      expect(line.err, "the whole error is for debug level").toBeUndefined();
      expect(String(line.cause)).toMatch(/ECONNREFUSED/);
      expect(String(line.cause).match(/Connection error/g)?.length ?? 0).toBeLessThanOrEqual(1);
      expect(JSON.stringify(line).length).toBeLessThan(600);
      expect(logs.some((l) => l.level === 20 && l.msg === "run failed: the whole error")).toBe(true);
    } finally {
      await harness.close();
    }
  });

  it("says agent ready only when the model answers, else one warning naming the problem", async () => {
    const up = await startMockModel();
    const gone = await goneModel();
    try {
      for (const [mock, reachable] of [
        [up, true],
        [gone, false],
      ] as const) {
        const { logger, logs } = memoryLogger();
        const harness = await createHarness({ config: configFor(mock), baseDir: tempDir(), logger });
        const announced = () =>
          logs.filter((l) => l.msg === "agent ready" || l.msg === "agent not ready: its model cannot answer");
        await eventually(() => announced().length > 0, 5_000, "the agent's readiness line");
        await harness.close();
        expect(announced()).toHaveLength(1);
        const line = announced()[0]!;
        expect(line).toMatchObject({ model: "mock", model_id: "mock-model", base_url: mock.url });
        if (reachable) expect(line).toMatchObject({ level: 30, msg: "agent ready" });
        else expect(line).toMatchObject({ level: WARN, problem: expect.stringMatching(/not reachable.*base_url/) });
      }
    } finally {
      await up.close();
    }
  });

  it("keeps a pretty log entry on one line", () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ format: "pretty", destination });
    logger.warn({ code: "model_error", cause: "Connection error.: connect ECONNREFUSED 127.0.0.1:9" }, "run failed");
    const text = lines.join("");
    expect(text.trimEnd().split("\n")).toHaveLength(1);
    expect(text).toContain("ECONNREFUSED");
  });
});

describe("failureCause", () => {
  it("names each distinct message once, outermost first, and the first address a connection tried", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
    const aggregate = new AggregateError([refused], "");
    const fetchFailed = new TypeError("fetch failed", { cause: aggregate });
    const client = new Error("Connection error.", { cause: fetchFailed });
    let wrapped: Error = client;
    for (let i = 0; i < 4; i++) wrapped = new Error("Connection error.", { cause: wrapped });
    expect(failureCause(wrapped)).toBe("Connection error.: fetch failed: connect ECONNREFUSED 127.0.0.1:9");
  });
});
