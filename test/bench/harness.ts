/**
 * Benchmark (not a test): what the harness costs per streamed token and per agent turn, next
 * to raw `ChatOpenAI.stream` against the same zero-delay mock model.
 *
 *   npm run bench:harness            (TOKENS=4000 TURNS=60 to change the sizes)
 *
 * Per token: one long reply streamed one character per chunk, minus the cost of a one-token
 * reply, divided by the extra tokens. Per turn: the mean time of a run with a one-token reply
 * (the harness adds the graph, the middleware chain and a SQLite checkpoint per turn).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ChatOpenAI } from "@langchain/openai";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/loader.js";
import { type AgentHarness, createHarness } from "../../src/harness/index.js";
import { silentLogger } from "../../src/log/logger.js";
import { type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";

const TOKENS = Number(process.argv[2] ?? process.env.TOKENS ?? 3000);
const TURNS = Number(process.argv[3] ?? process.env.TURNS ?? 40);

async function timed(fn: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function rawStream(model: ChatOpenAI, mock: MockModel, text: string): Promise<number> {
  mock.enqueue({ text, chunkSize: 1 });
  return timed(async () => {
    let n = 0;
    for await (const chunk of await model.stream("go")) if (chunk.text) n++;
    if (n !== text.length) throw new Error(`raw: got ${n} tokens, expected ${text.length}`);
  });
}

let threadSeq = 0;
async function harnessRun(harness: AgentHarness, mock: MockModel, text: string): Promise<number> {
  mock.enqueue({ text, chunkSize: 1 });
  const thread = `bench-${++threadSeq}`;
  return timed(async () => {
    let n = 0;
    for await (const e of harness.run(thread, "go")) {
      if (e.type === "text") n++;
      if (e.type === "error") throw new Error(`harness run failed: ${e.message}`);
    }
    if (n !== text.length) throw new Error(`harness: got ${n} tokens, expected ${text.length}`);
  });
}

async function measure(run: (text: string) => Promise<number>) {
  const long = "x".repeat(TOKENS);
  for (let i = 0; i < 3; i++) await run("warm");
  await run(long);
  const turns: number[] = [];
  for (let i = 0; i < TURNS; i++) turns.push(await run("y"));
  const perTurn = turns.reduce((a, b) => a + b, 0) / turns.length;
  const longMs = Math.min(await run(long), await run(long));
  return { perTurnMs: perTurn, perTokenUs: ((longMs - perTurn) / (TOKENS - 1)) * 1000, longMs };
}

async function main() {
  const mock = await startMockModel();
  const dir = mkdtempSync(path.join(tmpdir(), "antler-bench-"));
  try {
    const model = new ChatOpenAI({
      model: "mock-model",
      apiKey: "sk-bench",
      configuration: { baseURL: mock.url },
      maxRetries: 0,
    });
    const raw = await measure((text) => rawStream(model, mock, text));
    const config = parseConfig(stringify({ storage: { path: "./bench.db" }, models: [mockModelConfig(mock)] }), {});
    const harness = await createHarness({ config, baseDir: dir, logger: silentLogger() });
    const agent = await measure((text) => harnessRun(harness, mock, text));
    await harness.close();

    const row = (name: string, r: number, h: number, unit: string) =>
      `${name.padEnd(10)} ${`${r.toFixed(1)} ${unit}`.padStart(12)} ${`${h.toFixed(1)} ${unit}`.padStart(12)} ${`${(h / r).toFixed(1)}x`.padStart(8)} ${`+${(h - r).toFixed(1)} ${unit}`.padStart(12)}`;
    console.log(`harness vs raw ChatOpenAI.stream, zero-delay mock, ${TOKENS} tokens/long reply, ${TURNS} short turns`);
    console.log(
      `${"".padEnd(10)} ${"raw".padStart(12)} ${"harness".padStart(12)} ${"ratio".padStart(8)} ${"overhead".padStart(12)}`,
    );
    console.log(row("per token", raw.perTokenUs, agent.perTokenUs, "µs"));
    console.log(row("per turn", raw.perTurnMs, agent.perTurnMs, "ms"));
    console.log(row("long reply", raw.longMs, agent.longMs, "ms"));
  } finally {
    await mock.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
