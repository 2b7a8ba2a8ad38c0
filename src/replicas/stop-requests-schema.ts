/**
 * The table of `/stop` requests between replicas (see stop-requests.ts), as migration steps of
 * their own name (`replica_stops`), beside the replicas' tables in the same schema. It carries the
 * tenant and row-level security like the binding store's tables: a connection sees and writes
 * only the rows of the tenant in its `antler.tenant` setting (set per transaction here, since the
 * coordinator's connections serve every tenant), and none without one.
 */
import { TENANT_SETTING } from "../storage/postgres.js";

export const STOP_REQUESTS_SCHEMA = "replica_stops";

export const STOP_REQUESTS_STEPS: readonly string[] = [
  `CREATE TABLE antler_stop_requests (
    tenant text NOT NULL,
    id bigserial NOT NULL,
    key text NOT NULL,
    replica text NOT NULL,
    requested_by text NOT NULL,
    requested_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, id));
  CREATE INDEX antler_stop_requests_replica ON antler_stop_requests (tenant, replica);
  ALTER TABLE antler_stop_requests ENABLE ROW LEVEL SECURITY;
  ALTER TABLE antler_stop_requests FORCE ROW LEVEL SECURITY;
  CREATE POLICY antler_tenant ON antler_stop_requests
    USING (tenant = current_setting('${TENANT_SETTING}', true))
    WITH CHECK (tenant = current_setting('${TENANT_SETTING}', true));`,
];
