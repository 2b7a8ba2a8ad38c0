/**
 * The media desk a gateway runs with, built from its config: one folder per thread under
 * `storage.files` (default: `files` beside the database), the desk that takes attachments in and
 * posts files out, and the `read_file`/`send_file` tools every embedded agent gets.
 */

import path from "node:path";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { Tenancy } from "../config/agents.js";
import type { LoadedConfig } from "../config/loader.js";
import { type AgentFiles, FileOutbox, ThreadFiles } from "../harness/files.js";
import { selectModel } from "../harness/models/index.js";
import { fileTools } from "../harness/tools/files.js";
import type { Logger } from "../log/logger.js";
import { MediaDesk } from "./desk.js";

/**
 * The desk, the file tools that share its folders, and those folders with the outbox for backends
 * that bring files of their own (a remote agent's presented files); `tenancy` says which model
 * each agent uses (for images).
 */
export function openMedia(
  loaded: Pick<LoadedConfig, "config" | "baseDir">,
  tenancy: Tenancy,
  logger: Logger,
): { desk: MediaDesk; tools: StructuredToolInterface[]; files: AgentFiles } {
  const { config, baseDir } = loaded;
  const root = config.storage.files
    ? path.resolve(baseDir, config.storage.files)
    : path.join(path.dirname(path.resolve(baseDir, config.storage.path)), "files");
  const files = new ThreadFiles(root);
  const outbox = new FileOutbox();
  const desk = new MediaDesk({
    config: config.media,
    uploadTimeoutMs: config.gateway.platform_call_timeout_ms,
    files,
    outbox,
    logger,
    vision: (agent) => {
      if (config.models.length === 0) return false;
      return selectModel(config.models, tenancy.agentConfig(agent).model).supports_vision;
    },
  });
  return {
    desk,
    tools: fileTools({ files, outbox, maxSendBytes: desk.maxBytes }),
    files: { files, outbox, maxBytes: desk.maxBytes },
  };
}
