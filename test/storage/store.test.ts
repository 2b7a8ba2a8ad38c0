/**
 * The tenants' LangGraph stores (`Checkpoints.store`) on both storage kinds: what one tenant puts
 * no other tenant reads, finds or lists, even under the same namespace and key; items survive a
 * reopen; and the memory book reads exactly one person's namespace on either kind (PostgresStore
 * matches prefixes by characters).
 */

import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { MemoryBook } from "../../src/harness/memory/book.js";
import type { Checkpoints } from "../../src/storage/kind.js";
import { checkpointSchema, PostgresCheckpoints } from "../../src/storage/postgres/index.js";
import { SqliteCheckpoints } from "../../src/storage/sqlite/index.js";
import { adminQuery, postgresUrl } from "../helpers/postgres.js";

const opened: Checkpoints[] = [];
const schemas: string[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  for (const schema of schemas) await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
});

interface Kind {
  label: string;
  /** Opens the kind's checkpoints (and stores); the same `place` opens the same data again. */
  open(place: string): Checkpoints;
  /** A place of its own for one test. */
  place(): string;
  /** Tenant names of their own for one test. */
  tenants(): [string, string];
}

const sqlite: Kind = {
  label: "sqlite",
  open: (file) => {
    const c = new SqliteCheckpoints(file, "normal");
    opened.push(c);
    return c;
  },
  place: () => path.join(mkdtempSync(path.join(tmpdir(), "antler-store-")), "antler.db"),
  tenants: () => ["acme", "globex"],
};

const postgres: Kind = {
  label: "postgres",
  open: () => {
    const c = new PostgresCheckpoints({ url: postgresUrl(), poolSize: 3 });
    opened.push(c);
    return c;
  },
  place: () => "",
  tenants: () => {
    const suffix = randomBytes(4).toString("hex");
    const names: [string, string] = [`sa_${suffix}`, `sb_${suffix}`];
    schemas.push(...names.map(checkpointSchema));
    return names;
  },
};

describe.each([sqlite, postgres])("tenant stores on $label", (kind) => {
  it("keeps each tenant's items apart: same namespace and key, another tenant reads, finds and lists none of them", async () => {
    const [a, b] = kind.tenants();
    const checkpoints = kind.open(kind.place());
    const storeA = await checkpoints.store(a);
    const storeB = await checkpoints.store(b);
    await storeA.put(["memory", "p1"], "f1", { text: "Lives in Lisbon" });
    await storeB.put(["memory", "p1"], "f1", { text: "Lives in Oslo" });
    await storeA.put(["memory", "p2"], "f2", { text: "Likes tea" });

    expect((await storeA.get(["memory", "p1"], "f1"))?.value).toEqual({ text: "Lives in Lisbon" });
    expect((await storeB.get(["memory", "p1"], "f1"))?.value).toEqual({ text: "Lives in Oslo" });
    expect(await storeB.get(["memory", "p2"], "f2")).toBeNull();
    expect((await storeB.search(["memory"])).map((i) => i.value.text)).toEqual(["Lives in Oslo"]);
    expect((await storeB.listNamespaces({ prefix: ["memory"] })).sort()).toEqual([["memory", "p1"]]);
    expect((await storeA.listNamespaces({ prefix: ["memory"] })).map((n) => n.join("/")).sort()).toEqual([
      "memory/p1",
      "memory/p2",
    ]);

    await storeB.delete(["memory", "p1"], "f1");
    expect(await storeB.get(["memory", "p1"], "f1")).toBeNull();
    expect((await storeA.get(["memory", "p1"], "f1"))?.value).toEqual({ text: "Lives in Lisbon" });
  });

  it("keeps created and updated times, and the items across a reopen", async () => {
    const [a] = kind.tenants();
    const place = kind.place();
    const first = kind.open(place);
    const store = await first.store(a);
    await store.put(["notes", "x"], "k", { n: 1 });
    const created = await store.get(["notes", "x"], "k");
    await new Promise((r) => setTimeout(r, 15));
    await store.put(["notes", "x"], "k", { n: 2 });
    const updated = await store.get(["notes", "x"], "k");
    expect(updated?.value).toEqual({ n: 2 });
    expect(updated?.createdAt.getTime()).toBe(created?.createdAt.getTime());
    expect(updated!.updatedAt.getTime()).toBeGreaterThan(created!.updatedAt.getTime());
    await first.close();
    opened.splice(opened.indexOf(first), 1);

    const again = await kind.open(place).store(a);
    expect((await again.get(["notes", "x"], "k"))?.value).toEqual({ n: 2 });
  });

  it("searches with a filter on the value's keys", async () => {
    const [a] = kind.tenants();
    const store = await kind.open(kind.place()).store(a);
    await store.put(["docs"], "1", { kind: "note", n: 1 });
    await store.put(["docs"], "2", { kind: "todo", n: 2 });
    await store.put(["docs"], "3", { kind: "note", n: 3 });
    const notes = await store.search(["docs"], { filter: { kind: "note" } });
    expect(notes.map((i) => i.key).sort()).toEqual(["1", "3"]);
  });

  it("the memory book reads one person exactly: p1 never sees p12's facts, nor p_1 those of px1", async () => {
    const [a] = kind.tenants();
    const store = await kind.open(kind.place()).store(a);
    const book = new MemoryBook(store);
    await book.apply("p12", { add: [{ text: "Is p12" }] });
    await book.apply("px1", { add: [{ text: "Is px1" }] });
    await book.apply("p1", { add: [{ text: "Is p1" }] });
    await book.apply("p_1", { add: [{ text: "Is p_1" }] });
    expect((await book.list("p1")).map((f) => f.text)).toEqual(["Is p1"]);
    expect((await book.list("p_1")).map((f) => f.text)).toEqual(["Is p_1"]);
    expect(await book.clear("p1")).toBe(1);
    expect((await book.list("p12")).map((f) => f.text)).toEqual(["Is p12"]);
  });
});

describe("the SQLite store", () => {
  it("matches namespace prefixes by label, lists namespaces by depth and wildcard, and pages a search", async () => {
    const store = await sqlite.open(sqlite.place()).store("t");
    await store.put(["memory", "a"], "1", { text: "one" });
    await store.put(["memory", "ab"], "2", { text: "two" });
    await store.put(["memory", "a", "deep"], "3", { text: "three" });
    expect((await store.search(["memory", "a"])).map((i) => i.key).sort()).toEqual(["1", "3"]);
    expect(await store.listNamespaces({ prefix: ["memory"], maxDepth: 2 })).toEqual([
      ["memory", "a"],
      ["memory", "ab"],
    ]);
    expect(await store.listNamespaces({ suffix: ["*", "deep"] })).toEqual([["memory", "a", "deep"]]);
    expect(await store.search(["memory"], { query: "TWO" })).toHaveLength(1);
    expect(await store.search(["memory"], { limit: 2 })).toHaveLength(2);
    expect(await store.search(["memory"], { limit: 2, offset: 2 })).toHaveLength(1);
    await expect(store.put(["bad.label"], "k", {})).rejects.toThrow(/periods/);
  });
});
