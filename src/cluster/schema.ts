/**
 * The cluster's tables, as migration steps (`migrate` in storage/postgres.ts keeps their
 * version under the name `cluster`, under the advisory lock every replica takes before
 * migrating). They hold no tenant data, only which process holds what, so they carry no
 * row-level security; conversation leases name the tenant as part of their key.
 *
 * Times are `timestamptz` from the database's clock, never a replica's.
 */
import type { MigrationStep } from "../storage/postgres.js";

export const SCHEMA_NAME = "cluster";

export const STEPS: readonly MigrationStep[] = [
  `
CREATE TABLE antler_cluster_replicas (
  id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  admin_url text,
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE antler_cluster_channel_leases (
  channel text PRIMARY KEY,
  replica text NOT NULL,
  acquired_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

CREATE TABLE antler_cluster_conversation_leases (
  tenant text NOT NULL,
  key text NOT NULL,
  replica text NOT NULL,
  acquired_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (tenant, key)
);
CREATE INDEX antler_cluster_conversation_leases_expiry ON antler_cluster_conversation_leases (expires_at);
`,
];
