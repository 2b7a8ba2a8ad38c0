/**
 * `storage.kind: postgres`: the database at `storage.url`, shared by every gateway replica. The
 * binding store keeps tenants apart by row-level security, each tenant's checkpoints live in a
 * schema of their own, and each replica joins the others through the coordinator
 * (src/replicas/coordinator.ts): who is alive, who runs which channel and conversation.
 */
import { Coordinator } from "../../replicas/coordinator.js";
import { connectionWarning } from "../connections.js";
import type { StorageContext, StorageKind, StorageSettings } from "../kind.js";
import type { PostgresConnection } from "../postgres.js";
import { PostgresBindingStore } from "./binding-store.js";
import { PostgresCheckpoints } from "./checkpoints.js";

export { PostgresBindingStore } from "./binding-store.js";
export { checkpointSchema, PostgresCheckpoints } from "./checkpoints.js";
export { PrunedPostgresSaver } from "./prune.js";

/** The database of `storage.kind: postgres` (the config schema makes `storage.url` required there). */
export function postgresConnection(settings: StorageSettings): PostgresConnection {
  return { url: settings.url ?? "", poolSize: settings.pool_size };
}

export const postgresStorage: StorageKind = {
  kind: "postgres",
  async open(settings, context) {
    const store = await PostgresBindingStore.open({ connection: postgresConnection(settings), replica: context.replica });
    try {
      return { store, coordinator: await joinReplicas(settings, store, context) };
    } catch (err) {
      await store.close();
      throw err;
    }
  },
  checkpoints(settings) {
    return new PostgresCheckpoints(postgresConnection(settings), { history: settings.checkpoint_history });
  },
};

/**
 * This replica's coordinator, after the two start-up checks a shared database needs: that row
 * level security applies to the gateway's role, and that the replicas together fit the server's
 * connections.
 */
async function joinReplicas(
  settings: StorageSettings,
  store: PostgresBindingStore,
  context: StorageContext,
): Promise<Coordinator> {
  const { logger } = context;
  if (await store.rowSecurityBypassed()) {
    logger.warn(
      "the database role of storage.url is a superuser or has BYPASSRLS: row-level security does not keep tenants apart for it; connect as a role without them (see src/bindings/README.md)",
    );
  }
  const coordinator = await Coordinator.open({
    connection: postgresConnection(settings),
    id: context.replica,
    url: context.serverUrl,
    logger,
  });
  try {
    const warning = connectionWarning(
      settings.pool_size,
      context.tenants,
      (await coordinator.liveIds()).size,
      await store.connectionLimit(),
    );
    if (warning) logger.warn(warning);
  } catch (err) {
    await coordinator.close();
    throw err;
  }
  return coordinator;
}
