/**
 * `storage.kind: sqlite` (the default): one gateway process keeps everything in the file at
 * `storage.path`: the binding store's `antler_*` tables and the agents' checkpoints, each tenant's
 * rows marked with their tenant. One process owns the file, so there is no replica coordinator.
 */
import path from "node:path";
import type { StorageKind } from "../kind.js";
import { SqliteBindingStore } from "./binding-store.js";
import { SqliteCheckpoints } from "./checkpoints.js";

export { SqliteBindingStore } from "./binding-store.js";
export { SqliteCheckpoints, TenantCheckpointSaver } from "./checkpoints.js";

export const sqliteStorage: StorageKind = {
  kind: "sqlite",
  async open(settings, { baseDir }) {
    return { store: new SqliteBindingStore(path.resolve(baseDir, settings.path), Date.now, settings.synchronous) };
  },
  checkpoints(settings, baseDir) {
    return new SqliteCheckpoints(path.resolve(baseDir, settings.path), settings.synchronous);
  },
};
