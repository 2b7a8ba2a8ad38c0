/**
 * The binding store's tables on PostgreSQL, as migration steps (see `migrate` in
 * storage/postgres.ts; their versions are kept under the name `bindings`).
 *
 * The columns follow the SQLite tables, so both stores behave the same: times are bigint ms from
 * the store's clock, and `tenant` leads every key. What is new:
 * - `seq` (bigserial) orders rows recorded in the same millisecond, as SQLite's rowid does;
 * - `owner` on the inbox: the replica that recorded or last claimed an event;
 * - row-level security on every table: a connection sees and writes only the rows of the tenant
 *   in its `antler.tenant` setting, and none without one. FORCE applies it to the tables' owner
 *   too; only a superuser or a BYPASSRLS role escapes it.
 */
import { TENANT_SETTING } from "../postgres.js";

export const SCHEMA_NAME = "bindings";

const TABLES = ["antler_threads", "antler_pending", "antler_inbox", "antler_agent_choice"];

const CREATE = `
CREATE TABLE antler_threads (
  tenant text NOT NULL,
  key text NOT NULL,
  thread_id text NOT NULL,
  agent text,
  created_at bigint NOT NULL,
  current boolean NOT NULL,
  seq bigserial NOT NULL,
  PRIMARY KEY (tenant, key, thread_id)
);
-- One current thread per conversation, whatever two writers do at once.
CREATE UNIQUE INDEX antler_threads_current ON antler_threads (tenant, key) WHERE current;

CREATE TABLE antler_pending (
  tenant text NOT NULL,
  thread_id text NOT NULL,
  key text NOT NULL,
  question_id text NOT NULL,
  interrupt_id text NOT NULL,
  question text NOT NULL,
  options jsonb NOT NULL,
  kind text,
  posted jsonb,
  created_at bigint NOT NULL,
  asked_by jsonb,
  approval jsonb,
  seq bigserial NOT NULL,
  PRIMARY KEY (tenant, thread_id),
  UNIQUE (tenant, question_id)
);
CREATE INDEX antler_pending_approvals ON antler_pending (tenant, created_at, seq) WHERE approval IS NOT NULL;

-- payload is text, not jsonb: it holds users' text as sent, and jsonb refuses the \\u0000 escape.
CREATE TABLE antler_inbox (
  tenant text NOT NULL,
  channel text NOT NULL,
  event_id text NOT NULL,
  key text NOT NULL,
  state text NOT NULL CHECK (state IN ('received', 'running', 'done', 'failed')),
  payload text NOT NULL,
  received_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  error text,
  owner text,
  seq bigserial NOT NULL,
  PRIMARY KEY (tenant, channel, event_id)
);
CREATE INDEX antler_inbox_unfinished ON antler_inbox (tenant, received_at, seq) WHERE state IN ('received', 'running');
CREATE INDEX antler_inbox_waiting ON antler_inbox (tenant, key, seq) WHERE state = 'received';
CREATE INDEX antler_inbox_owner ON antler_inbox (tenant, owner) WHERE state IN ('received', 'running');
CREATE INDEX antler_inbox_finished ON antler_inbox (tenant, received_at) WHERE state IN ('done', 'failed');

CREATE TABLE antler_agent_choice (
  tenant text NOT NULL,
  key text NOT NULL,
  agent text NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant, key)
);
`;

/** `current_setting(…, true)` is NULL when the setting is absent, so such a connection sees no row. */
const rowSecurity = (tables: string[]) =>
  tables
    .map(
      (table) => `
ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
CREATE POLICY antler_tenant ON ${table}
  USING (tenant = current_setting('${TENANT_SETTING}', true))
  WITH CHECK (tenant = current_setting('${TENANT_SETTING}', true));`,
    )
    .join("\n");

/**
 * What Antler sends on its own (src/bindings/outbox.ts, schedules.ts). Their JSON columns are
 * `json`, not `jsonb`: they hold users' text as written, \u0000 escapes included, and nothing
 * queries inside them. `seq` orders the outbox's entries (a claim never passes an older unfinished
 * entry of the same conversation) and the schedules' creation. An index on the inbox's
 * conversation finds its last event.
 */
const SENDING = `
CREATE TABLE antler_outbox (
  tenant text NOT NULL,
  id text NOT NULL,
  seq bigserial NOT NULL,
  idempotency_key text NOT NULL,
  body_hash text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('send', 'run')),
  channel text NOT NULL,
  key text NOT NULL,
  payload json NOT NULL,
  source text NOT NULL,
  state text NOT NULL CHECK (state IN ('queued', 'sending', 'running', 'sent', 'failed')),
  attempts integer NOT NULL,
  next_attempt_at bigint NOT NULL,
  owner text,
  lease_until bigint,
  progress json,
  result json,
  error text,
  error_code text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  sent_at bigint,
  PRIMARY KEY (tenant, id),
  UNIQUE (tenant, idempotency_key)
);
CREATE INDEX antler_outbox_claim ON antler_outbox (tenant, state, next_attempt_at);
CREATE INDEX antler_outbox_order ON antler_outbox (tenant, channel, key, seq);
CREATE INDEX antler_outbox_recent ON antler_outbox (tenant, seq);
CREATE INDEX antler_outbox_finished ON antler_outbox (tenant, updated_at) WHERE state IN ('sent', 'failed');

CREATE TABLE antler_schedules (
  tenant text NOT NULL,
  id text NOT NULL,
  seq bigserial NOT NULL,
  origin text NOT NULL,
  name text NOT NULL,
  channel text NOT NULL,
  key text NOT NULL,
  target json NOT NULL,
  timing json NOT NULL,
  action json NOT NULL,
  agent text,
  thread text NOT NULL,
  created_by json,
  state text NOT NULL CHECK (state IN ('active', 'paused', 'disabled', 'done')),
  reason text,
  next_fire_at bigint,
  last_fire_at bigint,
  last_result text,
  last_outbox_id text,
  fires integer NOT NULL DEFAULT 0,
  missed integer NOT NULL DEFAULT 0,
  skipped integer NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant, id)
);
CREATE INDEX antler_schedules_due ON antler_schedules (tenant, next_fire_at) WHERE state = 'active';
CREATE INDEX antler_schedules_order ON antler_schedules (tenant, created_at, seq);

CREATE INDEX antler_inbox_key ON antler_inbox (tenant, key, received_at, seq);
`;

/** Each conversation's own settings, by name (src/bindings/types.ts, `ConversationSettings`). */
const SETTINGS = `
CREATE TABLE antler_conversation_settings (
  tenant text NOT NULL,
  key text NOT NULL,
  name text NOT NULL,
  value text NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant, key, name)
);
`;

/** The steps in order; the schema's version is how many of them it has had. */
export const STEPS: readonly string[] = [
  CREATE + rowSecurity(TABLES),
  SENDING + rowSecurity(["antler_outbox", "antler_schedules"]),
  SETTINGS + rowSecurity(["antler_conversation_settings"]),
];
