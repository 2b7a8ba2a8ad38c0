/**
 * The channel contract with the other agent backends behind the gateway: a user's own graph
 * (loaded by reflection) and an agent on a real LangGraph API server in this process, through the
 * loopback channel and, for the remote backend, through telegraf against the Telegram fake too.
 */
import path from "node:path";
import { channelContract } from "../../src/testing/contract/index.js";
import { loopbackDriver } from "../contract/loopback-driver.js";
import { MODEL_URL_ENV } from "../fakes/langgraph/graphs.js";
import { startMockModel } from "../fakes/openai.js";
import { TelegramDriver } from "../fakes/telegram/driver.js";
import { useLangGraphServer } from "../harness/remote-helpers.js";

const USER_GRAPHS = path.join(import.meta.dirname, "../harness/fixtures/user-graphs.ts");
const lg = useLangGraphServer();

channelContract("loopback, graph backend", async () => loopbackDriver({ buttons: true, edits: true }), {
  gateway: async () => ({ agent: { backend: "graph", graph: `${USER_GRAPHS}:agent` } }),
  also: ["followups"],
});

/** A fresh mock model behind the test server's graphs, and the gateway's agent on that server. */
async function remoteAgent() {
  const model = await startMockModel();
  process.env[MODEL_URL_ENV] = model.url;
  const server = lg.server();
  return { model, agent: { backend: "remote", remote: { url: server.url, assistant_id: "agent", api_key: server.apiKey } } };
}

channelContract("loopback, remote backend", async () => loopbackDriver({ buttons: true, edits: true }), { gateway: remoteAgent });
channelContract("telegram (polling), remote backend", () => TelegramDriver.start({ mode: "polling" }), {
  gateway: remoteAgent,
  also: ["followups"],
});
