/**
 * Remote-backend test setup: one real LangGraph API server per test file (langgraph-api keeps
 * global state, one server per process), and remote harnesses whose server graphs talk to a fresh
 * mock model each.
 */
import { afterAll, beforeAll } from "vitest";
import { RemoteAgentConfig } from "../../src/config/schema.js";
import { RemoteHarness } from "../../src/harness/index.js";
import type { HarnessSubject } from "../../src/testing/index.js";
import { MODEL_URL_ENV } from "../fakes/langgraph/graphs.js";
import { type LangGraphServer, startLangGraphServer } from "../fakes/langgraph/server.js";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { memoryLogger } from "./helpers.js";

export interface RemoteSubject extends HarnessSubject {
  harness: RemoteHarness;
  logs: Array<Record<string, unknown>>;
}

/** Starts the server before the file's tests and stops it after; returns accessors. */
export function useLangGraphServer() {
  let server: LangGraphServer | undefined;
  let serverModel: MockModel | undefined;
  beforeAll(async () => {
    serverModel = await startMockModel();
    server = await startLangGraphServer({ modelUrl: serverModel.url });
  });
  afterAll(async () => {
    await server?.close();
    await serverModel?.close();
  });
  const current = () => {
    if (!server) throw new Error("the LangGraph server is not started");
    return server;
  };
  /** A remote harness on `assistant`; `settings` override agent.remote keys. */
  const subject = async (assistant = "agent", settings: Record<string, unknown> = {}): Promise<RemoteSubject> => {
    const mock = await startMockModel();
    process.env[MODEL_URL_ENV] = mock.url;
    const s = current();
    const config = RemoteAgentConfig.parse({ url: s.url, assistant_id: assistant, api_key: s.apiKey, ...settings });
    const { logger, logs } = memoryLogger();
    const harness = new RemoteHarness({ settings: config, logger });
    return {
      harness,
      mock,
      logs,
      close: async () => {
        await harness.close();
        await mock.close();
      },
    };
  };
  return { server: current, subject };
}
