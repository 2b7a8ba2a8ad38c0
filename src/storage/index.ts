/**
 * The storage kinds, by the `storage.kind` value that names them, and the two ways in: a
 * gateway opens its storage (`openStorage`), an agent opens its checkpoints (`openCheckpoints`).
 * A new kind is a folder beside sqlite/ and postgres/ exporting a `StorageKind`, added here (see
 * README.md).
 */
import type { Checkpoints, OpenedStorage, StorageContext, StorageKind, StorageSettings } from "./kind.js";
import { postgresStorage } from "./postgres/index.js";
import { sqliteStorage } from "./sqlite/index.js";

export type { Checkpoints, OpenedStorage, StorageContext, StorageKind, StorageSettings } from "./kind.js";
export { TenantCheckpointSaver } from "./sqlite/index.js";

const KINDS: ReadonlyMap<string, StorageKind> = new Map([sqliteStorage, postgresStorage].map((k) => [k.kind, k]));

/** The plug-in of `settings.kind` (the config schema admits only the kinds here). */
export function storageKind(settings: StorageSettings): StorageKind {
  const kind = KINDS.get(settings.kind);
  if (!kind) throw new Error(`[antler] storage.kind ${settings.kind} is not one of ${[...KINDS.keys()].join(", ")}`);
  return kind;
}

/** Opens a gateway's storage: the default tenant's binding store and, on a shared kind, its coordinator. */
export function openStorage(settings: StorageSettings, context: StorageContext): Promise<OpenedStorage> {
  return storageKind(settings).open(settings, context);
}

/** Every tenant's agent checkpointer over the configured storage. */
export function openCheckpoints(settings: StorageSettings, baseDir: string): Checkpoints {
  return storageKind(settings).checkpoints(settings, baseDir);
}
