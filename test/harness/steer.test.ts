/**
 * Steering a running turn (`Harness.steer`) on the two local backends: the embedded agent built
 * from config, and a user's hand-written graph (a model node and a ToolNode named `tools`) on the
 * graph backend. Both drain the run at the step boundary after the tools step (steer/local.ts).
 */
import path from "node:path";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/loader.js";
import { createAgentBackend } from "../../src/harness/index.js";
import { waitTool } from "../../src/testing/tools.js";
import { startMockModel } from "../fakes/openai.js";
import { memoryLogger, startHarness, tempDir } from "./helpers.js";
import { steerCases } from "./steer-cases.js";

steerCases("embedded", async () => {
  const mock = await startMockModel();
  const { harness } = await startHarness(mock, {}, [waitTool()]);
  return {
    harness,
    mock,
    close: async () => {
      await harness.close();
      await mock.close();
    },
  };
});

steerCases("graph (a hand-written tool loop)", async () => {
  const mock = await startMockModel();
  const config = parseConfig(
    stringify({
      storage: { path: path.join(tempDir(), "antler.db") },
      models: [{ name: "mock", use: "@langchain/openai:ChatOpenAI", model: "mock-model", api_key: "sk-x", base_url: mock.url }],
      agent: { backend: "graph", graph: "./user-graphs.ts:toolLoop" },
    }),
    {},
  );
  const harness = await createAgentBackend({
    config,
    baseDir: path.join(import.meta.dirname, "fixtures"),
    logger: memoryLogger().logger,
  });
  return {
    harness,
    mock,
    close: async () => {
      await harness.close();
      await mock.close();
    },
  };
});
