/**
 * The `remote` backend: an agent on a LangGraph API server (`agent.remote`), driven through
 * `@langchain/langgraph-sdk` by the RemoteHarness (harness.ts). The registry imports this folder
 * only when an agent uses it, so the SDK loads only then.
 */
import { ConfigError } from "../../errors.js";
import type { BackendFactory } from "../backend-factory.js";
import { RemoteHarness } from "./harness.js";

export { RemoteHarness, type RemoteHarnessOptions } from "./harness.js";
export { TAG_KEY } from "./threads.js";

export const remoteBackend: BackendFactory = async ({ settings, section, logger, onUsage, files }) => {
  if (!settings.remote) {
    throw new ConfigError([{ path: `${section ?? "agent"}.remote`, message: "is required when backend is remote" }]);
  }
  logger.info({ url: settings.remote.url, assistant: settings.remote.assistant_id }, "remote agent configured");
  return new RemoteHarness({ settings: settings.remote, logger, onUsage, files });
};
