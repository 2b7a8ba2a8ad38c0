/** Shared setup of the harness tests: a harness from real config over the mock model. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/loader.js";
import type { AppConfig } from "../../src/config/schema.js";
import { type AgentHarness, createHarness } from "../../src/harness/index.js";
import { createLogger, type Logger } from "../../src/log/logger.js";

export { collect, deltas, last, runUntil } from "../../src/testing/runs.js";

import type { Harness } from "../../src/harness/types.js";
import type { HarnessSubject } from "../../src/testing/index.js";
import { type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";

export interface TestHarness {
  harness: AgentHarness;
  config: AppConfig;
  baseDir: string;
  /** Log lines written so far, parsed. */
  logs: Array<Record<string, unknown>>;
}

/** A logger that keeps its JSON lines in `logs`. */
export function memoryLogger(): { logger: Logger; logs: Array<Record<string, unknown>> } {
  const logs: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level: "debug", format: "json", destination }), logs };
}

export function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), "antler-harness-"));
}

/** Config text for a harness on `mock`; `extra` is merged over the top-level sections. */
export function configFor(mock: MockModel, extra: Record<string, unknown> = {}): AppConfig {
  const raw = { storage: { path: "./state/antler.db" }, models: [mockModelConfig(mock)], ...extra };
  return parseConfig(stringify(raw), {});
}

export async function startHarness(
  mock: MockModel,
  extra: Record<string, unknown> = {},
  tools?: StructuredToolInterface[],
): Promise<TestHarness> {
  const baseDir = tempDir();
  const config = configFor(mock, extra);
  const { logger, logs } = memoryLogger();
  const harness = await createHarness({ config, baseDir, logger, tools });
  return { harness, config, baseDir, logs };
}

/** A harness contract subject over a fresh mock model: `build` makes the harness that talks to it. */
export async function subjectOver(build: (mock: MockModel) => Promise<Harness>): Promise<HarnessSubject> {
  const mock = await startMockModel();
  const harness = await build(mock);
  return {
    harness,
    mock,
    close: async () => {
      await harness.close();
      await mock.close();
    },
  };
}
