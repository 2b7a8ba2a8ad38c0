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
import type { RunEvent } from "../../src/harness/types.js";
import { createLogger, type Logger } from "../../src/log/logger.js";
import { type MockModel, mockModelConfig } from "../fakes/openai.js";

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

export async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** The one closing event of a run; fails when there is not exactly one. */
export function last(events: RunEvent[]): RunEvent {
  const closing = events.filter((e) => e.type === "done" || e.type === "clarification" || e.type === "error");
  if (closing.length !== 1 || closing[0] !== events.at(-1)) {
    throw new Error(`expected exactly one closing event at the end, got ${JSON.stringify(events.map((e) => e.type))}`);
  }
  return closing[0] as RunEvent;
}

export function deltas(events: RunEvent[]): string[] {
  return events.flatMap((e) => (e.type === "text" ? [e.delta] : []));
}

/** Iterates a run until `until` matches, then calls `act`, then drains it. */
export async function runUntil(events: AsyncIterable<RunEvent>, until: (e: RunEvent) => boolean, act: () => void) {
  const seen: RunEvent[] = [];
  let acted = false;
  for await (const e of events) {
    seen.push(e);
    if (!acted && until(e)) {
      acted = true;
      act();
    }
  }
  return seen;
}
