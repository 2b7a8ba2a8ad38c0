/**
 * The binding store's tables and the steps that bring any older file up to them.
 *
 * Step N brings a file from version N-1 to N; `antler_migrations` holds one row per applied
 * step. Files written before versions were recorded have no such table and count as version 0,
 * whatever shape their tables had; step 1 gives them (and a new file) the last unversioned shape.
 * All pending steps run in one IMMEDIATE transaction that re-reads the version after taking the
 * write lock, so two processes opening the same file migrate it once, and a failed step leaves
 * the file as it was.
 */
import type Database from "better-sqlite3";
import { DEFAULT_TENANT } from "../tenant.js";

/** The tables as they were before versions were recorded (asked_by came last). */
const UNVERSIONED = `
CREATE TABLE IF NOT EXISTS antler_threads (
  key TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  current INTEGER NOT NULL,
  PRIMARY KEY (key, thread_id)
);
CREATE INDEX IF NOT EXISTS antler_threads_current ON antler_threads (key, current);
CREATE TABLE IF NOT EXISTS antler_pending (
  thread_id TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  question_id TEXT NOT NULL UNIQUE,
  interrupt_id TEXT NOT NULL,
  question TEXT NOT NULL,
  options TEXT NOT NULL,
  kind TEXT,
  posted TEXT,
  created_at INTEGER NOT NULL,
  asked_by TEXT
);
CREATE TABLE IF NOT EXISTS antler_inbox (
  channel TEXT NOT NULL,
  event_id TEXT NOT NULL,
  key TEXT NOT NULL,
  state TEXT NOT NULL,
  payload TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  error TEXT,
  PRIMARY KEY (channel, event_id)
);
CREATE INDEX IF NOT EXISTS antler_inbox_state ON antler_inbox (state, received_at);
`;

/**
 * Tenant leads every key, so equal conversation keys, event ids or question ids of two tenants
 * are different rows. Existing rows go to the default tenant; rowids are copied so rows stored in
 * the same millisecond keep their order.
 */
const TENANTS = `
CREATE TABLE antler_threads_next (
  tenant TEXT NOT NULL,
  key TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  agent TEXT,
  created_at INTEGER NOT NULL,
  current INTEGER NOT NULL,
  PRIMARY KEY (tenant, key, thread_id)
);
INSERT INTO antler_threads_next (rowid, tenant, key, thread_id, created_at, current)
  SELECT rowid, '${DEFAULT_TENANT}', key, thread_id, created_at, current FROM antler_threads;
DROP TABLE antler_threads;
ALTER TABLE antler_threads_next RENAME TO antler_threads;
CREATE INDEX antler_threads_current ON antler_threads (tenant, key, current);

CREATE TABLE antler_pending_next (
  tenant TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  key TEXT NOT NULL,
  question_id TEXT NOT NULL,
  interrupt_id TEXT NOT NULL,
  question TEXT NOT NULL,
  options TEXT NOT NULL,
  kind TEXT,
  posted TEXT,
  created_at INTEGER NOT NULL,
  asked_by TEXT,
  PRIMARY KEY (tenant, thread_id),
  UNIQUE (tenant, question_id)
);
INSERT INTO antler_pending_next (rowid, tenant, thread_id, key, question_id, interrupt_id, question, options, kind, posted, created_at, asked_by)
  SELECT rowid, '${DEFAULT_TENANT}', thread_id, key, question_id, interrupt_id, question, options, kind, posted, created_at, asked_by
  FROM antler_pending;
DROP TABLE antler_pending;
ALTER TABLE antler_pending_next RENAME TO antler_pending;

CREATE TABLE antler_inbox_next (
  tenant TEXT NOT NULL,
  channel TEXT NOT NULL,
  event_id TEXT NOT NULL,
  key TEXT NOT NULL,
  state TEXT NOT NULL,
  payload TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  error TEXT,
  PRIMARY KEY (tenant, channel, event_id)
);
INSERT INTO antler_inbox_next (rowid, tenant, channel, event_id, key, state, payload, received_at, updated_at, error)
  SELECT rowid, '${DEFAULT_TENANT}', channel, event_id, key, state, payload, received_at, updated_at, error FROM antler_inbox;
DROP TABLE antler_inbox;
ALTER TABLE antler_inbox_next RENAME TO antler_inbox;
CREATE INDEX antler_inbox_state ON antler_inbox (tenant, state, received_at);

CREATE TABLE antler_agent_choice (
  tenant TEXT NOT NULL,
  key TEXT NOT NULL,
  agent TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key)
);
`;

/**
 * What Antler sends on its own: the outbox and the schedules (src/bindings/outbox.ts,
 * schedules.ts). `seq` is the order entries were written in (the store gives each the highest
 * so far plus one); unlike the rowid, VACUUM never renumbers it. An index on the inbox's
 * conversation finds its last event.
 */
const SENDING = `
CREATE TABLE antler_outbox (
  tenant TEXT NOT NULL,
  id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  kind TEXT NOT NULL,
  channel TEXT NOT NULL,
  key TEXT NOT NULL,
  payload TEXT NOT NULL,
  source TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL,
  owner TEXT,
  lease_until INTEGER,
  progress TEXT,
  result TEXT,
  error TEXT,
  error_code TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  sent_at INTEGER,
  PRIMARY KEY (tenant, id),
  UNIQUE (tenant, idempotency_key)
);
CREATE UNIQUE INDEX antler_outbox_seq ON antler_outbox (seq);
CREATE INDEX antler_outbox_claim ON antler_outbox (tenant, state, next_attempt_at);
CREATE INDEX antler_outbox_order ON antler_outbox (tenant, channel, key, seq);
CREATE INDEX antler_outbox_finished ON antler_outbox (tenant, updated_at) WHERE state IN ('sent', 'failed');

CREATE TABLE antler_schedules (
  tenant TEXT NOT NULL,
  id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  origin TEXT NOT NULL,
  name TEXT NOT NULL,
  channel TEXT NOT NULL,
  key TEXT NOT NULL,
  target TEXT NOT NULL,
  timing TEXT NOT NULL,
  action TEXT NOT NULL,
  agent TEXT,
  thread TEXT NOT NULL,
  created_by TEXT,
  state TEXT NOT NULL,
  reason TEXT,
  next_fire_at INTEGER,
  last_fire_at INTEGER,
  last_result TEXT,
  last_outbox_id TEXT,
  fires INTEGER NOT NULL DEFAULT 0,
  missed INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, id)
);
CREATE INDEX antler_schedules_due ON antler_schedules (tenant, state, next_fire_at);
CREATE INDEX antler_schedules_order ON antler_schedules (tenant, created_at, seq);

CREATE INDEX antler_inbox_key ON antler_inbox (tenant, key, received_at);
`;

/** Each conversation's own settings, by name (src/bindings/types.ts, `ConversationSettings`). */
const SETTINGS = `
CREATE TABLE antler_conversation_settings (
  tenant TEXT NOT NULL,
  key TEXT NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key, name)
);
`;

/** The steps in order; the file's version is how many of them it has had. */
export const STEPS: ReadonlyArray<(db: Database.Database) => void> = [
  (db) => {
    db.exec(UNVERSIONED);
    // Files older than asked_by keep NULL there: anyone may answer their questions, as before.
    const columns = db.prepare("PRAGMA table_info(antler_pending)").all() as Array<{ name: string }>;
    if (!columns.some((c) => c.name === "asked_by")) db.exec("ALTER TABLE antler_pending ADD COLUMN asked_by TEXT");
  },
  (db) => {
    // A rebuild, not ALTER TABLE: SQLite cannot change a primary key in place.
    db.exec(TENANTS);
  },
  (db) => {
    // The state of a tool approval (JSON); NULL for an ordinary question.
    db.exec("ALTER TABLE antler_pending ADD COLUMN approval TEXT");
  },
  (db) => {
    db.exec(SENDING);
  },
  (db) => {
    db.exec(SETTINGS);
  },
];

/**
 * Brings `db` up to the newest schema; does nothing on a file that is already there. `steps` is
 * for tests, which write a file as an older Antler left it by giving the first few.
 */
export function migrate(db: Database.Database, now: number, steps: typeof STEPS = STEPS): void {
  const run = db.transaction(() => {
    db.exec("CREATE TABLE IF NOT EXISTS antler_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
    const { version } = db.prepare("SELECT COALESCE(MAX(version), 0) AS version FROM antler_migrations").get() as {
      version: number;
    };
    if (version > steps.length)
      throw new Error(`[antler] [bindings] the database is at schema version ${version}; this Antler knows ${steps.length}`);
    const record = db.prepare("INSERT INTO antler_migrations (version, applied_at) VALUES (?, ?)");
    steps.slice(version).forEach((step, i) => {
      step(db);
      record.run(version + i + 1, now);
    });
  });
  run.immediate();
}
