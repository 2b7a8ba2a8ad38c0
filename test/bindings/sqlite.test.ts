import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteBindingStore } from "../../src/bindings/sqlite.js";
import { openDatabase } from "../../src/storage/sqlite.js";
import { bindingStoreContract } from "./contract.js";

let file = "";
bindingStoreContract("sqlite", {
  async open(clock) {
    file = path.join(mkdtempSync(path.join(tmpdir(), "antler-bind-")), "nested", "antler.db");
    return new SqliteBindingStore(file, clock);
  },
  async reopen(clock) {
    return new SqliteBindingStore(file, clock);
  },
});

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
