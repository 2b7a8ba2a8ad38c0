/**
 * How many PostgreSQL connections the replicas of one deployment may open, against what the
 * server allows. Each replica opens, at most:
 * - one pool per tenant for its bindings (`pool_size` each),
 * - one pool for the agents' checkpoints (`pool_size`),
 * - the replica coordinator's small pool (`COORDINATOR_POOL_MAX`),
 * - one listening connection for broadcasts.
 */

/** The replica coordinator's pool never opens more than this many connections. */
export const COORDINATOR_POOL_MAX = 4;

/** The most connections one replica opens with `tenants` tenants and `poolSize` per pool. */
export function connectionsPerReplica(poolSize: number, tenants: number): number {
  return (tenants + 1) * poolSize + Math.min(poolSize, COORDINATOR_POOL_MAX) + 1;
}

export interface ConnectionBudget {
  /** The most connections `replicas` replicas may open together. */
  needed: number;
  /** What the server lets ordinary roles open: `max_connections` less the superusers' reserve. */
  available: number;
}

/**
 * A warning for the log when `replicas` replicas could open more connections than the server
 * allows (they would then fail with "too many clients" under load), or undefined when they fit.
 */
export function connectionWarning(poolSize: number, tenants: number, replicas: number, available: number): string | undefined {
  const needed = replicas * connectionsPerReplica(poolSize, tenants);
  if (needed <= available) return undefined;
  return (
    `${replicas} replica(s) with ${tenants} tenant(s) and storage.pool_size ${poolSize} may open ${needed} PostgreSQL connections, ` +
    `but the server allows ${available} (max_connections less superuser_reserved_connections): lower storage.pool_size ` +
    "or raise the server's max_connections (see src/bindings/README.md)"
  );
}
