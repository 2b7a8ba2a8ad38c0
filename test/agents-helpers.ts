/**
 * A whole gateway for the agents/routes/tenants tests. `startTestGateway` takes one model and no
 * agents, routes, tenants or MCP servers, so this builds the config itself: several mock models
 * by name, and loopback channels by name.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { AppConfigSchema } from "../src/config/schema.js";
import { createGateway, type Gateway } from "../src/gateway.js";
import { freePort, testLogger } from "./contract/gateway.js";
import type { LoopbackWorld } from "./fakes/loopback.js";
import { type MockModel, mockModelConfig } from "./fakes/openai.js";

export interface GatewaySpec {
  /** `models:`, each entry on a mock, by name; the first is the default model. */
  models: Record<string, MockModel>;
  /** Loopback channels by name. */
  channels: Record<string, LoopbackWorld>;
  /** Folder of the SQLite file: the same folder again is a restart. */
  dir: string;
  agent?: Record<string, unknown>;
  agents?: Record<string, Record<string, unknown>>;
  routes?: Record<string, unknown>[];
  tenants?: Record<string, Record<string, unknown>>;
  mcp_servers?: Record<string, Record<string, unknown>>;
  tools?: Record<string, unknown>[];
}

export interface RunningGateway {
  gateway: Gateway;
  url: string;
  /** Stops the gateway once (later calls do nothing). */
  stop(): Promise<void>;
}

export function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), "antler-agents-"));
}

export async function bootGateway(spec: GatewaySpec): Promise<RunningGateway> {
  const port = await freePort();
  const config = AppConfigSchema.parse({
    server: { host: "127.0.0.1", port },
    storage: { path: path.join(spec.dir, "antler.db") },
    logging: { level: "silent" },
    models: Object.entries(spec.models).map(([name, mock]) => mockModelConfig(mock, name)),
    tools: spec.tools ?? [],
    mcp_servers: spec.mcp_servers ?? {},
    agent: spec.agent ?? {},
    agents: spec.agents ?? {},
    routes: spec.routes ?? [],
    tenants: spec.tenants ?? {},
    channels: Object.fromEntries(Object.entries(spec.channels).map(([name, world]) => [name, world.channelConfig()])),
  });
  const gateway = createGateway({ loaded: { config, baseDir: spec.dir }, logger: testLogger() });
  await gateway.start();
  let stopped: Promise<void> | undefined;
  return {
    gateway,
    url: `http://127.0.0.1:${port}`,
    stop: () => {
      stopped ??= gateway.stop();
      return stopped;
    },
  };
}
