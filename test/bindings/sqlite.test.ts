import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteBindingStore } from "../../src/storage/sqlite/index.js";
import { migrate, STEPS } from "../../src/storage/sqlite/schema.js";
import { openDatabase } from "../../src/storage/sqlite.js";
import { bindingStoreContract } from "../../src/testing/index.js";

let file = "";
bindingStoreContract(
  "sqlite",
  async (clock) => {
    file = path.join(mkdtempSync(path.join(tmpdir(), "antler-bind-")), "nested", "antler.db");
    return new SqliteBindingStore(file, clock);
  },
  {
    async reopen(clock) {
      return new SqliteBindingStore(file, clock);
    },
    skip: [{ part: "replicas", reason: "a SQLite file serves one gateway process, so its store has no replica methods" }],
  },
);

describe("SqliteBindingStore migration", () => {
  it("adds the asked_by column to a database written before it existed, keeping its questions", async () => {
    const old = path.join(mkdtempSync(path.join(tmpdir(), "antler-old-")), "antler.db");
    const db = new Database(old);
    db.exec(`CREATE TABLE antler_pending (
      thread_id TEXT PRIMARY KEY, key TEXT NOT NULL, question_id TEXT NOT NULL UNIQUE, interrupt_id TEXT NOT NULL,
      question TEXT NOT NULL, options TEXT NOT NULL, kind TEXT, posted TEXT, created_at INTEGER NOT NULL)`);
    db.prepare(
      "INSERT INTO antler_pending (thread_id, key, question_id, interrupt_id, question, options, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ).run("t-old", "tg:w:1", "q-old", "i-old", "Still open?", '["yes","no"]', 5);
    db.close();

    const store = new SqliteBindingStore(old);
    const kept = await store.findPendingByQuestionId("q-old");
    expect(kept).toMatchObject({ threadId: "t-old", question: "Still open?", options: ["yes", "no"] });
    expect(kept?.askedBy).toBeUndefined();
    await store.setPending({ ...kept!, threadId: "t-new", questionId: "q-new", askedBy: { id: "u9", name: "Nine" } });
    expect((await store.getPending("t-new"))?.askedBy).toEqual({ id: "u9", name: "Nine" });
    await store.close();
    // Opening it again finds the column already there.
    const again = new SqliteBindingStore(old);
    expect((await again.getPending("t-new"))?.askedBy).toEqual({ id: "u9", name: "Nine" });
    await again.close();
  });
});

/** The tables as Antler wrote them before tenants, with a few rows in each. */
function writeBeforeTenants(file: string): void {
  const db = new Database(file);
  db.exec(`
    CREATE TABLE antler_threads (key TEXT NOT NULL, thread_id TEXT NOT NULL, created_at INTEGER NOT NULL,
      current INTEGER NOT NULL, PRIMARY KEY (key, thread_id));
    CREATE INDEX antler_threads_current ON antler_threads (key, current);
    CREATE TABLE antler_pending (thread_id TEXT PRIMARY KEY, key TEXT NOT NULL, question_id TEXT NOT NULL UNIQUE,
      interrupt_id TEXT NOT NULL, question TEXT NOT NULL, options TEXT NOT NULL, kind TEXT, posted TEXT,
      created_at INTEGER NOT NULL, asked_by TEXT);
    CREATE TABLE antler_inbox (channel TEXT NOT NULL, event_id TEXT NOT NULL, key TEXT NOT NULL, state TEXT NOT NULL,
      payload TEXT NOT NULL, received_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, error TEXT,
      PRIMARY KEY (channel, event_id));
    CREATE INDEX antler_inbox_state ON antler_inbox (state, received_at);
    INSERT INTO antler_threads VALUES ('tg:w:1', 't-a', 7, 0), ('tg:w:1', 't-b', 7, 1);
    INSERT INTO antler_pending VALUES ('t-b', 'tg:w:1', 'q-old', 'i-old', 'Still open?', '["yes","no"]', NULL, NULL, 8,
      '{"id":"u1"}');
    INSERT INTO antler_inbox VALUES ('tg', 'e2', 'tg:w:1', 'running', '{"n":2}', 9, 9, NULL),
      ('tg', 'e1', 'tg:w:1', 'received', '{"n":1}', 9, 9, NULL);
  `);
  db.close();
}

function oldFile(): string {
  return path.join(mkdtempSync(path.join(tmpdir(), "antler-old-")), "antler.db");
}

function migrations(file: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT version, applied_at FROM antler_migrations ORDER BY version").all();
  } finally {
    db.close();
  }
}

describe("SqliteBindingStore migration to tenants", () => {
  it("keeps the rows of a database written before tenants, under the default tenant", async () => {
    const file = oldFile();
    writeBeforeTenants(file);
    const store = new SqliteBindingStore(file, () => 50);
    expect(await store.currentBinding("tg:w:1")).toEqual({ key: "tg:w:1", threadId: "t-b", createdAt: 7, current: true });
    // Rows stored in the same millisecond keep their order.
    expect((await store.threadHistory("tg:w:1")).map((h) => h.threadId)).toEqual(["t-b", "t-a"]);
    expect(await store.findPendingByQuestionId("q-old")).toMatchObject({ threadId: "t-b", askedBy: { id: "u1" } });
    expect((await store.unfinished()).map((e) => e.eventId)).toEqual(["e2", "e1"]);
    expect(await store.recordInbound({ channel: "tg", eventId: "e1", key: "tg:w:1", payload: {} })).toBe(false);
    await store.setConversationSetting("tg:w:1", "queue", "steer");
    expect(await store.conversationSetting("tg:w:1", "queue")).toBe("steer");

    const other = store.forTenant("acme");
    expect(await other.currentThread("tg:w:1")).toBeUndefined();
    expect(await other.findPendingByQuestionId("q-old")).toBeUndefined();
    expect(await other.unfinished()).toEqual([]);
    await store.close();

    const db = new Database(file, { readonly: true });
    for (const table of ["antler_threads", "antler_pending", "antler_inbox"])
      expect(db.prepare(`SELECT DISTINCT tenant FROM ${table}`).pluck().all()).toEqual(["default"]);
    db.close();
    expect(migrations(file)).toEqual([
      { version: 1, applied_at: 50 },
      { version: 2, applied_at: 50 },
      { version: 3, applied_at: 50 },
      { version: 4, applied_at: 50 },
      { version: 5, applied_at: 50 },
    ]);
  });

  it("migrates a file once: opening it again finds it current and changes nothing", async () => {
    const file = oldFile();
    writeBeforeTenants(file);
    await new SqliteBindingStore(file, () => 50).close();
    const again = new SqliteBindingStore(file, () => 60);
    await again.forTenant("acme").bindThread("tg:w:1", "t-acme", "support");
    await again.close();
    const third = new SqliteBindingStore(file, () => 70);
    expect((await third.threadHistory("tg:w:1")).map((h) => h.threadId)).toEqual(["t-b", "t-a"]);
    expect((await third.forTenant("acme").currentBinding("tg:w:1"))?.agent).toBe("support");
    await third.close();
    expect(migrations(file)).toEqual([
      { version: 1, applied_at: 50 },
      { version: 2, applied_at: 50 },
      { version: 3, applied_at: 50 },
      { version: 4, applied_at: 50 },
      { version: 5, applied_at: 50 },
    ]);
  });

  it("gives a file an older Antler left at version 4 the conversation settings, keeping its rows", async () => {
    const file = oldFile();
    const db = new Database(file);
    migrate(db, 40, STEPS.slice(0, 4));
    db.exec(`INSERT INTO antler_threads (tenant, key, thread_id, agent, created_at, current)
      VALUES ('default', 'tg:w:1', 't-4', 'support', 7, 1)`);
    db.exec("INSERT INTO antler_agent_choice VALUES ('default', 'tg:w:1', 'support', 7)");
    const tables = () => db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    expect(tables()).not.toContain("antler_conversation_settings");
    db.close();

    const store = new SqliteBindingStore(file, () => 50);
    expect(await store.currentBinding("tg:w:1")).toMatchObject({ threadId: "t-4", agent: "support" });
    expect(await store.chosenAgent("tg:w:1")).toBe("support");
    expect(await store.conversationSetting("tg:w:1", "queue")).toBeUndefined();
    await store.setConversationSetting("tg:w:1", "queue", "collect");
    await store.forTenant("acme").setConversationSetting("tg:w:1", "queue", "steer");
    await store.close();
    const again = new SqliteBindingStore(file, () => 60);
    expect(await again.conversationSetting("tg:w:1", "queue")).toBe("collect");
    expect(await again.forTenant("acme").conversationSetting("tg:w:1", "queue")).toBe("steer");
    await again.close();
    expect(migrations(file)).toEqual([
      { version: 1, applied_at: 40 },
      { version: 2, applied_at: 40 },
      { version: 3, applied_at: 40 },
      { version: 4, applied_at: 40 },
      { version: 5, applied_at: 50 },
    ]);
  });

  it("leaves the file as it was when a step fails", () => {
    const file = oldFile();
    const db = new Database(file);
    // A table of the right name but the wrong shape: a step fails on it.
    db.exec("CREATE TABLE antler_threads (key TEXT, thread_id TEXT, PRIMARY KEY (key, thread_id))");
    db.exec("INSERT INTO antler_threads VALUES ('k', 't1')");
    db.close();
    expect(() => new SqliteBindingStore(file)).toThrow();
    const after = new Database(file, { readonly: true });
    const tables = after.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    expect(tables).toEqual(["antler_threads"]);
    expect(after.prepare("SELECT key, thread_id FROM antler_threads").all()).toEqual([{ key: "k", thread_id: "t1" }]);
    after.close();
  });

  it("refuses a file migrated by a newer Antler", async () => {
    const file = oldFile();
    await new SqliteBindingStore(file).close();
    const db = new Database(file);
    db.exec("INSERT INTO antler_migrations VALUES (99, 0)");
    db.close();
    expect(() => new SqliteBindingStore(file)).toThrow(/schema version 99/);
  });
});

describe("openDatabase", () => {
  it("opens in WAL mode with storage.synchronous applied: normal by default, full on request", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "antler-sync-"));
    for (const [setting, expected] of [
      ["normal", 1],
      ["full", 2],
    ] as const) {
      const db = openDatabase(path.join(dir, `${setting}.db`), setting);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(db.pragma("synchronous", { simple: true })).toBe(expected);
      db.close();
    }
  });
});
