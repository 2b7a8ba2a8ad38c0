/**
 * TenantCheckpointSaver: two tenants' savers on one database, driven by a real LangGraph graph.
 * Neither sees, continues, resumes nor deletes the other's threads, even under the same thread id.
 */
import { Command } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TenantCheckpointSaver } from "../../src/storage/sqlite/index.js";
import { DEFAULT_TENANT } from "../../src/storage/tenant.js";
import { pausingGraph } from "./pausing-graph.js";

const thread = (id: string) => ({ configurable: { thread_id: id } });

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("TenantCheckpointSaver", () => {
  let db: Database.Database;
  let a: TenantCheckpointSaver;
  let b: TenantCheckpointSaver;

  beforeEach(() => {
    db = new Database(":memory:");
    // Every checkpoint kept, so `list` has history to keep apart (pruning: test/storage/checkpoint-prune.test.ts).
    a = new TenantCheckpointSaver(db, "a", { history: "all" });
    b = new TenantCheckpointSaver(db, "b", { history: "all" });
  });
  afterEach(() => {
    db.close();
  });

  it("shows another tenant's thread as empty, and cannot resume it", async () => {
    const graphA = pausingGraph(a);
    const graphB = pausingGraph(b);
    await graphA.invoke({ log: ["from a"] }, thread("t1"));
    expect((await graphA.getState(thread("t1"))).next).toEqual(["ask"]);

    const seen = await graphB.getState(thread("t1"));
    expect(seen.values).toEqual({});
    expect(seen.next).toEqual([]);
    expect(await all(graphB.getStateHistory(thread("t1")))).toEqual([]);
    // B's answer reaches no question: B's run starts on an empty thread of its own.
    expect(await graphB.invoke(new Command({ resume: "forged" }), thread("t1"))).toEqual({ count: 0, log: [] });

    const resumed = await graphA.invoke(new Command({ resume: "yes" }), thread("t1"));
    expect(resumed).toEqual({ count: 1, log: ["from a", "yes"] });
  });

  it("keeps two tenants' runs on the same thread id apart, whichever wrote last", async () => {
    const graphA = pausingGraph(a);
    const graphB = pausingGraph(b);
    await graphA.invoke({ log: ["a1"] }, thread("t1"));
    // B's checkpoints are newer than A's in the same thread; A's reads must skip them.
    await graphB.invoke({ log: ["b1"] }, thread("t1"));
    await graphB.invoke(new Command({ resume: "b-yes" }), thread("t1"));

    expect((await graphB.getState(thread("t1"))).values).toEqual({ count: 1, log: ["b1", "b-yes"] });
    expect((await graphA.getState(thread("t1"))).values).toEqual({ count: 1, log: ["a1"] });
    expect(await graphA.invoke(new Command({ resume: "a-yes" }), thread("t1"))).toEqual({ count: 1, log: ["a1", "a-yes"] });
    await graphA.invoke({ log: ["a2"] }, thread("t1"));
    expect((await graphA.getState(thread("t1"))).values).toMatchObject({ count: 2 });
    expect((await graphB.getState(thread("t1"))).values).toMatchObject({ count: 1 });

    const newestOfA = await all(a.list(thread("t1"), { limit: 1 }));
    expect(newestOfA.map((t) => t.metadata?.step)).toEqual([(await a.getTuple(thread("t1")))?.metadata?.step]);
    expect(await all(a.list(thread("t1"), { filter: { source: "input" } }))).toHaveLength(2);
  });

  it("records its tenant in the metadata of every checkpoint it writes", async () => {
    await pausingGraph(a).invoke({ log: ["x"] }, thread("t1"));
    const tuples = await all(a.list(thread("t1")));
    expect(tuples.length).toBeGreaterThan(1);
    expect(tuples.map((t) => (t.metadata as { tenant?: string }).tenant)).toEqual(tuples.map(() => "a"));
    const stored = db.prepare("SELECT DISTINCT json_extract(CAST(metadata AS TEXT), '$.tenant') FROM checkpoints").pluck().all();
    expect(stored).toEqual(["a"]);
  });

  it("reads checkpoints written before tenants as the default tenant's", async () => {
    await pausingGraph(new SqliteSaver(db)).invoke({ log: ["old"] }, thread("t-old"));
    const byDefault = pausingGraph(new TenantCheckpointSaver(db, DEFAULT_TENANT));
    expect((await byDefault.getState(thread("t-old"))).values).toEqual({ count: 1, log: ["old"] });
    expect((await pausingGraph(a).getState(thread("t-old"))).values).toEqual({});
    expect(await byDefault.invoke(new Command({ resume: "still here" }), thread("t-old"))).toEqual({
      count: 1,
      log: ["old", "still here"],
    });
  });

  it("deletes only its own tenant's checkpoints and writes of a thread", async () => {
    const writes = () => db.prepare("SELECT COUNT(*) FROM writes").pluck().get() as number;
    await pausingGraph(a).invoke({ log: ["a"] }, thread("t1"));
    const writesOfA = writes();
    await pausingGraph(b).invoke({ log: ["b"] }, thread("t1"));
    expect(writes()).toBeGreaterThan(writesOfA);
    await b.deleteThread("t1");
    expect(await b.getTuple(thread("t1"))).toBeUndefined();
    expect(writes()).toBe(writesOfA);
    expect((await pausingGraph(a).getState(thread("t1"))).values).toEqual({ count: 1, log: ["a"] });
    expect(await pausingGraph(a).invoke(new Command({ resume: "ok" }), thread("t1"))).toEqual({ count: 1, log: ["a", "ok"] });
  });
});
