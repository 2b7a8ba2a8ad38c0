/**
 * Giving space back on SQLite: a new file is made with incremental auto-vacuum; the gateway's
 * start prunes a file written before pruning, turns auto-vacuum on in it with one VACUUM (or says
 * how to, for a file too big to rewrite), and the file shrinks; a deleted thread's pages go back
 * to the disk once they are many.
 */
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { StorageSettings } from "../../src/storage/kind.js";
import { sqliteStorage, TenantCheckpointSaver, tidy } from "../../src/storage/sqlite/index.js";
import { openDatabase, pageBytes, RECLAIM_AT_BYTES } from "../../src/storage/sqlite.js";
import { memoryLogger } from "../harness/helpers.js";

const thread = (id: string) => ({ configurable: { thread_id: id } });

/** A graph that appends `size` bytes of text to its state on every run. */
function growing(saver: BaseCheckpointSaver, size: number) {
  const State = Annotation.Root({ notes: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
  return new StateGraph(State)
    .addNode("note", (s) => ({ notes: [`${s.notes.length}:${"x".repeat(size)}`] }))
    .addEdge(START, "note")
    .addEdge("note", END)
    .compile({ checkpointer: saver });
}

const settings = (history: "latest" | "all"): StorageSettings => ({
  kind: "sqlite",
  path: "antler.db",
  synchronous: "normal",
  pool_size: 2,
  checkpoint_history: history,
});

/** A file as an Antler before pruning left it: no auto-vacuum, every checkpoint of two tenants' threads. */
async function oldFile(): Promise<string> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "antler-reclaim-")), "antler.db");
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  for (const tenant of ["acme", "globex"]) {
    const graph = growing(new TenantCheckpointSaver(db, tenant, { history: "all" }), 2000);
    for (let i = 0; i < 40; i++) await graph.invoke({ notes: [] }, thread("t"));
  }
  db.close();
  return file;
}

const autoVacuum = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma("auto_vacuum", { simple: true });
  } finally {
    db.close();
  }
};

const count = (file: string, sql: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).pluck().get() as number;
  } finally {
    db.close();
  }
};

describe("SQLite space", () => {
  it("makes a new file with incremental auto-vacuum", () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "antler-reclaim-")), "antler.db");
    openDatabase(file, "normal").close();
    expect(autoVacuum(file)).toBe(2);
  });

  it("at the gateway's start prunes an old file, turns auto-vacuum on in it, and the file shrinks", async () => {
    const file = await oldFile();
    const before = statSync(file).size;
    expect(autoVacuum(file)).toBe(0);
    expect(count(file, "SELECT count(*) FROM checkpoints")).toBeGreaterThan(150);
    const { logger, logs } = memoryLogger();
    const { store } = await sqliteStorage.open(settings("latest"), {
      baseDir: path.dirname(file),
      replica: "r",
      serverUrl: undefined,
      tenants: 2,
      logger,
    });
    await store.close();
    expect(autoVacuum(file)).toBe(2);
    expect(count(file, "SELECT count(*) FROM checkpoints")).toBe(4);
    const after = statSync(file).size;
    expect(after).toBeLessThan(before / 5);
    expect(logs.find((l) => String(l.msg).includes("pruned old checkpoints"))).toMatchObject({
      prunedThreads: 2,
      vacuumed: true,
      bytesBefore: expect.any(Number),
    });
    // Each tenant's thread still reads back whole.
    const db = openDatabase(file, "normal");
    for (const tenant of ["acme", "globex"]) {
      const state = await growing(new TenantCheckpointSaver(db, tenant), 10).getState(thread("t"));
      expect((state.values.notes as string[]).map((n) => n.split(":")[0])).toEqual(
        Array.from({ length: 40 }, (_, i) => String(i)),
      );
    }
    db.close();
  });

  it("with checkpoint_history all keeps every checkpoint, and still turns auto-vacuum on", async () => {
    const file = await oldFile();
    const rows = count(file, "SELECT count(*) FROM checkpoints");
    tidy(file, settings("all"), memoryLogger().logger);
    expect(count(file, "SELECT count(*) FROM checkpoints")).toBe(rows);
    expect(autoVacuum(file)).toBe(2);
  });

  it("says how to turn auto-vacuum on in a file too big to rewrite at start, and prunes it all the same", async () => {
    const file = await oldFile();
    const { logger, logs } = memoryLogger();
    tidy(file, settings("latest"), logger, 0);
    expect(autoVacuum(file)).toBe(0);
    expect(count(file, "SELECT count(*) FROM checkpoints")).toBe(4);
    const warning = logs.find((l) => l.level === 40 || l.level === "warn");
    expect(String(warning?.msg)).toContain(`sqlite3 ${file} "PRAGMA auto_vacuum = INCREMENTAL; VACUUM;"`);
  });

  it("gives a deleted thread's pages back to the disk once they are many", async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "antler-reclaim-")), "antler.db");
    const db = openDatabase(file, "normal");
    const saver = new TenantCheckpointSaver(db, "acme", { history: "all" });
    const graph = growing(saver, 20_000);
    for (let i = 0; i < 30; i++) await graph.invoke({ notes: [] }, thread("big"));
    const before = pageBytes(db);
    expect(before.total).toBeGreaterThan(2 * RECLAIM_AT_BYTES);
    await saver.deleteThread("big");
    const after = pageBytes(db);
    expect(after.free).toBeLessThanOrEqual(RECLAIM_AT_BYTES);
    expect(after.total).toBeLessThan(before.total / 2);
    db.close();
  });
});
