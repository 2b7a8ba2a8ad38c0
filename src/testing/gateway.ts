/**
 * A whole gateway in-process for end-to-end tests: real dispatcher, renderer, store (SQLite, or
 * PostgreSQL through `storage`) and embedded harness, with the mock model behind ChatOpenAI and
 * channels pointing at fakes.
 */

import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { AppConfigSchema } from "../config/schema.js";
import { createGateway, type Gateway } from "../gateway.js";
import type { Harness } from "../harness/types.js";
import { createLogger, type Logger } from "../log/logger.js";
import type { SupervisorOptions } from "../supervisor.js";
import { type MockModel, mockModelConfig, startMockModel } from "./mock-model.js";

/** The waiting helpers, here too for the tests that import them with the gateway. */
export { eventually, setWaitFloor, sleep } from "./wait.js";

export interface TestGatewayOptions {
  /** `channels:` section. */
  channels: Record<string, Record<string, unknown>>;
  /** Reuse a model (e.g. across a restart); a new mock is started otherwise. */
  model?: MockModel;
  /** Folder for the SQLite file; reuse it to simulate a restart. */
  dir?: string;
  /** Port to listen on; a free one is picked otherwise. */
  port?: number;
  gateway?: Record<string, unknown>;
  agent?: Record<string, unknown>;
  server?: Record<string, unknown>;
  logger?: Logger;
  supervisor?: SupervisorOptions;
  startWaitMs?: number;
  /** More keys of the mock model's models[] entry (e.g. `stream_idle_timeout_ms`). */
  modelConfig?: Record<string, unknown>;
  /** Use this harness instead of the embedded agent on the mock model. */
  harness?: Harness;
  /** How long stop() lets running replies finish before cancelling them. */
  drainMs?: number;
  /** More top-level config sections (`agents`, `routes`, `tenants`, `mcp_servers`, `tools`, …). */
  sections?: Record<string, unknown>;
  /** Tools every embedded agent gets besides the configured ones. */
  tools?: StructuredToolInterface[];
  /** More `models:` entries after the mock model's (named `mock`). */
  models?: Record<string, unknown>[];
  /** More `storage:` keys, e.g. `{ kind: "postgres", url }` (the SQLite file stays in `dir`). */
  storage?: Record<string, unknown>;
  /** The gateway's replica id in a shared store. */
  replicaId?: string;
  /** The clock schedules are made and fired by, e.g. one a test moves forward. */
  clock?: () => number;
}

export interface TestGateway {
  gateway: Gateway;
  model: MockModel;
  dir: string;
  port: number;
  url: string;
  /** Stops the gateway (the model keeps running unless `closeModel`). */
  stop(closeModel?: boolean): Promise<void>;
}

/**
 * A port nothing listens on, for a server the caller starts later.
 *
 * A port the kernel hands out for `listen(0)` comes from the ephemeral range, the same range it
 * takes source ports of outgoing connections from, so between this check and the caller's
 * `listen` a busy test run can take it for a connection (EADDRINUSE). Ports are therefore picked
 * below that range, from a block chosen by the process id (each vitest worker is a process), and
 * checked by binding.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = nextCandidate();
    if (!FETCH_REFUSES.has(port) && (await bindable(port))) return port;
  }
  throw new Error("freePort: no free port found below the ephemeral range");
}

/** Ports at or above `FIRST` that `fetch` refuses to connect to ("bad port", the Fetch standard's list). */
const FETCH_REFUSES = new Set([10080]);

const BLOCK = 400;
const FIRST = 10_000;
let cursor = -1;

function nextCandidate(): number {
  const limit = ephemeralStart();
  const workers = Math.max(1, Math.floor((limit - FIRST) / BLOCK));
  // Test workers are processes of their own (vitest's forks pool), so the pid picks the block.
  const base = FIRST + (process.pid % workers) * BLOCK;
  cursor = cursor < 0 ? Math.floor(Math.random() * BLOCK) : (cursor + 1) % BLOCK;
  return base + cursor;
}

let ephemeral: number | undefined;
function ephemeralStart(): number {
  if (ephemeral === undefined) {
    try {
      const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
      ephemeral = Number.isInteger(low) && low > FIRST + BLOCK ? low : 32_768;
    } catch {
      ephemeral = 32_768;
    }
  }
  return ephemeral;
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A logger for tests: silent unless given a level. */
export function testLogger(level = "silent"): Logger {
  return createLogger({ level, format: "json" });
}

export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const model = options.model ?? (await startMockModel());
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), "antler-gw-"));
  const port = options.port ?? (await freePort());
  const config = AppConfigSchema.parse({
    server: { host: "127.0.0.1", port, ...options.server },
    // Test gateways on a database share the server's connection limit with every other test
    // (a kind without pools ignores pool_size).
    storage: { path: path.join(dir, "antler.db"), pool_size: 3, ...options.storage },
    logging: { level: "silent" },
    models: [{ ...mockModelConfig(model), max_retries: 0, ...options.modelConfig }, ...(options.models ?? [])],
    agent: options.agent ?? {},
    gateway: options.gateway ?? {},
    channels: options.channels,
    ...options.sections,
  });
  const gateway = createGateway({
    loaded: { config, baseDir: dir },
    logger: options.logger ?? testLogger(),
    ...(options.supervisor ? { supervisor: options.supervisor } : {}),
    ...(options.startWaitMs !== undefined ? { startWaitMs: options.startWaitMs } : {}),
    ...(options.harness ? { harness: options.harness } : {}),
    ...(options.drainMs !== undefined ? { drainMs: options.drainMs } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.replicaId ? { replicaId: options.replicaId } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  await gateway.start();
  return {
    gateway,
    model,
    dir,
    port,
    url: `http://127.0.0.1:${port}`,
    async stop(closeModel = true) {
      await gateway.stop();
      if (closeModel) await model.close();
    },
  };
}
