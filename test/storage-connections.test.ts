import { describe, expect, it } from "vitest";
import { StorageConfig } from "../src/config/schema.js";
import { connectionsPerReplica, connectionWarning } from "../src/storage/connections.js";

describe("PostgreSQL connections", () => {
  it("the default pool size fits 3 replicas with 2 tenants in PostgreSQL's default max_connections", () => {
    const poolSize = StorageConfig.parse({ kind: "postgres", url: "postgres://x@127.0.0.1/db" }).pool_size;
    // max_connections 100 less superuser_reserved_connections 3.
    expect(3 * connectionsPerReplica(poolSize, 2)).toBeLessThanOrEqual(97);
    expect(connectionWarning(poolSize, 2, 3, 97)).toBeUndefined();
  });

  it("warns with both figures when the replicas could open more than the server allows", () => {
    expect(connectionsPerReplica(10, 2)).toBe(35);
    const warning = connectionWarning(10, 2, 3, 97);
    expect(warning).toContain("105");
    expect(warning).toContain("97");
    expect(warning).toContain("storage.pool_size");
  });
});
