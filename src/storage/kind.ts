/**
 * What a storage kind is: the plug-in `storage.kind` names. A kind keeps everything Antler
 * stores durably in one place: the binding stores (conversations, pending questions, the inbox)
 * and the agents' checkpoints, per tenant; a kind several gateway replicas can share also joins
 * this process to the others (the replica coordinator). src/storage/index.ts maps each
 * `storage.kind` value to its plug-in; nothing else in Antler knows which kinds exist.
 */
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import type { BindingStore } from "../bindings/types.js";
import type { Logger } from "../log/logger.js";
import type { Coordinator } from "../replicas/coordinator.js";
import type { Synchronous } from "./sqlite.js";

/**
 * Which checkpoints a kind keeps (`storage.checkpoint_history`): `latest`, what each thread still
 * needs (its newest checkpoint, whole, and that one's parent); `all`, every step's, as LangGraph's
 * savers do (a thread then grows with the square of its length).
 */
export type CheckpointHistory = "latest" | "all";

/** The `storage:` section a kind reads (the config's own type fits it). */
export interface StorageSettings {
  /** Which kind: a key of the registry in src/storage/index.ts. */
  kind: string;
  /** The SQLite file, relative to the config file's folder. */
  path: string;
  /** SQLite's `synchronous` setting. */
  synchronous: Synchronous;
  /** The database of a kind that has one (`postgres://…`). */
  url?: string | undefined;
  /** Most connections each of a kind's pools opens. */
  pool_size: number;
  /** Which checkpoints the savers keep; `latest` when not given. */
  checkpoint_history?: CheckpointHistory | undefined;
}

/** What opening storage for a gateway needs to know about the gateway. */
export interface StorageContext {
  /** Folder of the config file; `storage.path` resolves against it. */
  baseDir: string;
  /** This gateway replica's id, recorded as the owner of the events its store records. */
  replica: string;
  /** Where this process's server answers, for the other replicas (undefined when it does not listen). */
  serverUrl: string | undefined;
  /** How many tenants the config has: each may open a pool of its own. */
  tenants: number;
  logger: Logger;
}

/** A gateway's storage, once open. */
export interface OpenedStorage {
  /** The default tenant's binding store; `forTenant` gives the others'. */
  store: BindingStore;
  /** This replica's link to the others on the same storage; only on a kind replicas share. */
  coordinator?: Coordinator;
}

/** Every tenant's agent checkpointer, and its long-term store, over one kind's storage. */
export interface Checkpoints {
  /**
   * `tenant`'s checkpointer. Without a tenant: the checkpointer of a lone agent that serves no
   * tenants (`createAgentBackend`), whose checkpoints every tenant-aware reader takes for the
   * default tenant's.
   */
  saver(tenant?: string): BaseCheckpointSaver | Promise<BaseCheckpointSaver>;
  /**
   * `tenant`'s LangGraph store (long-term memory, kept across threads), apart from every other
   * tenant's as its checkpoints are; the default tenant's without a tenant. Its tables are made on
   * first use. Closed with the checkpointers: a caller never stops it itself.
   */
  store(tenant?: string): BaseStore | Promise<BaseStore>;
  /** Closes what the savers share (a file, a pool). */
  close(): Promise<void>;
}

export interface StorageKind {
  /** The `storage.kind` value that names it. */
  readonly kind: string;
  /**
   * Opens the gateway's storage: the binding store (its tables created or migrated first) and, on
   * a kind replicas share, this replica's coordinator. Warnings about the storage go to the log.
   */
  open(settings: StorageSettings, context: StorageContext): Promise<OpenedStorage>;
  /** The agents' checkpointers; what they share opens now and closes with `close()`. */
  checkpoints(settings: StorageSettings, baseDir: string): Checkpoints;
}
