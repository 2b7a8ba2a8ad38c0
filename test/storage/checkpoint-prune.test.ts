/**
 * `storage.checkpoint_history: latest` on both kinds, driven by real LangGraph graphs: a thread
 * keeps its newest checkpoint and that one's parent per namespace, and still reads, pauses and
 * resumes as with every checkpoint kept; another tenant's rows are never touched; a finished
 * subgraph's namespace goes; a delta channel's ancestors stay until it snapshots; a sweep prunes
 * threads written before.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Annotation, Command, DeltaValue, END, interrupt, START, StateGraph, StateSchema } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { CheckpointHistory } from "../../src/storage/kind.js";
import { checkpointSchema, PostgresCheckpoints, PrunedPostgresSaver } from "../../src/storage/postgres/index.js";
import { openPool } from "../../src/storage/postgres.js";
import { SqliteCheckpoints, TenantCheckpointSaver } from "../../src/storage/sqlite/index.js";
import { sweep } from "../../src/storage/sqlite/prune.js";
import { openDatabase } from "../../src/storage/sqlite.js";
import { pausingGraph } from "../harness/pausing-graph.js";
import { adminQuery, postgresUrl } from "../helpers/postgres.js";

const thread = (id: string) => ({ configurable: { thread_id: id } });

/** One kind's savers for one test, and what its tables hold. */
interface Place {
  saver(tenant: string, history?: CheckpointHistory): Promise<BaseCheckpointSaver>;
  /** Checkpoint ids of the tenant's thread, per namespace, oldest first. */
  rows(tenant: string, threadId: string): Promise<Record<string, string[]>>;
  /** Rows of the tenant's writes (and blobs, on PostgreSQL) for the thread. */
  extras(tenant: string, threadId: string): Promise<number>;
  /** Prunes every thread written so far, as a start after an upgrade would. */
  sweep(tenant: string): Promise<number>;
  /** Two tenant names of this test's own. */
  tenants(): [string, string];
}

const closers: Array<() => Promise<void>> = [];
const schemas: string[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  for (const schema of schemas) await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
});

function sqlitePlace(): Place {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "antler-prune-")), "antler.db");
  const db = openDatabase(file, "normal");
  closers.push(async () => {
    db.close();
  });
  const owned = "COALESCE(json_extract(CAST(metadata AS TEXT), '$.tenant'), 'default') = ?";
  return {
    saver: async (tenant, history = "latest") => new TenantCheckpointSaver(db, tenant, { history }),
    rows: async (tenant, threadId) => {
      const sql = `SELECT checkpoint_ns AS ns, checkpoint_id AS id FROM checkpoints WHERE thread_id = ? AND ${owned} ORDER BY checkpoint_id`;
      return byNs(db.prepare(sql).all(threadId, tenant) as Array<{ ns: string; id: string }>);
    },
    extras: async (tenant, threadId) =>
      db
        .prepare(`SELECT count(*) FROM writes w WHERE thread_id = ? AND EXISTS (SELECT 1 FROM checkpoints c
          WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id AND ${owned})`)
        .pluck()
        .get(threadId, tenant) as number,
    sweep: async () => sweep(db).rows,
    tenants: () => ["acme", "globex"],
  };
}

function postgresPlace(): Place {
  const opened = new Map<CheckpointHistory, PostgresCheckpoints>();
  const checkpoints = (history: CheckpointHistory) => {
    let c = opened.get(history);
    if (!c) {
      c = new PostgresCheckpoints({ url: postgresUrl(), poolSize: 3 }, { history });
      opened.set(history, c);
      const close = c;
      closers.push(() => close.close());
    }
    return c;
  };
  const table = (tenant: string, name: string) => `"${checkpointSchema(tenant)}".${name}`;
  return {
    saver: (tenant, history = "latest") => checkpoints(history).saver(tenant),
    rows: async (tenant, threadId) =>
      byNs(
        await adminQuery<{ ns: string; id: string }>(
          `SELECT checkpoint_ns AS ns, checkpoint_id AS id FROM ${table(tenant, "checkpoints")} WHERE thread_id = $1 ORDER BY checkpoint_id`,
          [threadId],
        ),
      ),
    extras: async (tenant, threadId) => {
      const count = async (name: string) =>
        Number(
          (
            await adminQuery<{ n: string }>(`SELECT count(*) AS n FROM ${table(tenant, name)} WHERE thread_id = $1`, [threadId])
          )[0]?.n,
        );
      return (await count("checkpoint_writes")) + (await count("checkpoint_blobs"));
    },
    sweep: async (tenant) => {
      const pool = openPool({ url: postgresUrl(), poolSize: 2 });
      try {
        return (await new PrunedPostgresSaver(pool, checkpointSchema(tenant)).sweep()).rows;
      } finally {
        await pool.end();
      }
    },
    tenants: () => {
      const suffix = randomBytes(4).toString("hex");
      const names: [string, string] = [`pa_${suffix}`, `pb_${suffix}`];
      schemas.push(...names.map(checkpointSchema));
      return names;
    },
  };
}

function byNs(rows: Array<{ ns: string; id: string }>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const { ns, id } of rows) out[ns] = [...(out[ns] ?? []), id];
  return out;
}

/** `rounds` turns of the pausing graph: each counts, asks, and is answered. */
async function rounds(saver: BaseCheckpointSaver, threadId: string, n: number, from = 1): Promise<void> {
  const graph = pausingGraph(saver);
  for (let i = from; i < from + n; i++) {
    await graph.invoke({ log: [`q${i}`] }, thread(threadId));
    await graph.invoke(new Command({ resume: `a${i}` }), thread(threadId));
  }
}

const logOf = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, k) => [`q${k + from}`, `a${k + from}`]).flat();

/** A graph whose `sub` node is a subgraph (checkpointed in a namespace of its own per task) that asks a question. */
function subgraphGraph(saver: BaseCheckpointSaver) {
  const State = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
  const inner = new StateGraph(State)
    .addNode("think", () => ({ log: ["think"] }))
    .addNode("ask", () => ({ log: [String(interrupt("Which?"))] }))
    .addEdge(START, "think")
    .addEdge("think", "ask")
    .addEdge("ask", END)
    .compile();
  return new StateGraph(State)
    .addNode("start", () => ({ log: ["start"] }))
    .addNode("sub", inner)
    .addEdge(START, "start")
    .addEdge("start", "sub")
    .addEdge("sub", END)
    .compile({ checkpointer: saver });
}

/** A graph whose `items` are a delta channel: kept as writes along the parent chain, a full snapshot every 4 updates. */
function deltaGraph(saver: BaseCheckpointSaver) {
  const State = new StateSchema({
    items: new DeltaValue(
      z.array(z.string()).default(() => []),
      {
        inputSchema: z.array(z.string()),
        reducer: (current: string[], writes: string[][]) => [...current, ...writes.flat()],
        snapshotFrequency: 4,
      },
    ),
  });
  return new StateGraph(State)
    .addNode("echo", (s: { items: string[] }) => ({ items: [`seen ${s.items.length}`] }))
    .addEdge(START, "echo")
    .addEdge("echo", END)
    .compile({ checkpointer: saver });
}

describe.each([
  ["sqlite", sqlitePlace],
  ["postgres", postgresPlace],
])("checkpoint history on %s", (_label, makePlace) => {
  it("keeps the newest checkpoint and its parent of a thread, which reads and resumes as the full history does", async () => {
    const place = makePlace();
    const [tenant] = place.tenants();
    await rounds(await place.saver(tenant, "all"), "full", 12);
    // Counted before a pruning saver of the tenant opens: on PostgreSQL it sweeps the tenant's threads.
    expect((await place.rows(tenant, "full"))[""]?.length).toBeGreaterThan(40);
    await rounds(await place.saver(tenant), "lean", 12);
    const lean = await place.rows(tenant, "lean");
    expect(Object.keys(lean)).toEqual([""]);
    expect(lean[""]).toHaveLength(2);

    for (const saver of [await place.saver(tenant, "all"), await place.saver(tenant)]) {
      expect((await pausingGraph(saver).getState(thread("full"))).values).toEqual({ count: 12, log: logOf(1, 12) });
      expect((await pausingGraph(saver).getState(thread("lean"))).values).toEqual({ count: 12, log: logOf(1, 12) });
    }
    // A question asked now is answered by a saver opened afresh, the checkpoints pruned meanwhile.
    await pausingGraph(await place.saver(tenant)).invoke({ log: ["q13"] }, thread("lean"));
    const paused = await place.rows(tenant, "lean");
    expect(paused[""]).toHaveLength(2);
    expect(await place.extras(tenant, "lean")).toBeGreaterThan(0);
    const resumed = await pausingGraph(await place.saver(tenant)).invoke(new Command({ resume: "a13" }), thread("lean"));
    expect(resumed).toEqual({ count: 13, log: logOf(1, 13) });
  });

  it("never touches another tenant's checkpoints of a thread with the same id", async () => {
    const place = makePlace();
    const [a, b] = place.tenants();
    await rounds(await place.saver(b, "all"), "t", 3);
    // B's newest run is paused on its question while A writes many newer checkpoints under the same id.
    await pausingGraph(await place.saver(b, "all")).invoke({ log: ["q4"] }, thread("t"));
    const before = await place.rows(b, "t");
    const extrasBefore = await place.extras(b, "t");
    await rounds(await place.saver(a), "t", 10);
    expect(await place.rows(b, "t")).toEqual(before);
    expect(await place.extras(b, "t")).toBe(extrasBefore);
    expect((await place.rows(a, "t"))[""]).toHaveLength(2);
    const resumed = await pausingGraph(await place.saver(b)).invoke(new Command({ resume: "a4" }), thread("t"));
    expect(resumed).toEqual({ count: 4, log: logOf(1, 4) });
  });

  it("drops a subgraph's namespace once its step is over, and keeps the one that waits on a question", async () => {
    const place = makePlace();
    const [tenant, other] = place.tenants();
    const play = async (saver: BaseCheckpointSaver) => {
      const graph = subgraphGraph(saver);
      for (let i = 1; i <= 5; i++) {
        await graph.invoke({ log: [`in${i}`] }, thread("s"));
        await graph.invoke(new Command({ resume: `out${i}` }), thread("s"));
      }
      await graph.invoke({ log: ["in6"] }, thread("s"));
      return graph;
    };
    await play(await place.saver(other, "all"));
    expect(Object.keys(await place.rows(other, "s")).length).toBeGreaterThan(5);
    const graph = await play(await place.saver(tenant));
    const rows = await place.rows(tenant, "s");
    const subs = Object.keys(rows).filter((ns) => ns !== "");
    // Only the subgraph task waiting now is left; every namespace holds at most two checkpoints.
    expect(subs).toHaveLength(1);
    for (const ids of Object.values(rows)) expect(ids.length).toBeLessThanOrEqual(2);
    const waiting = await graph.getState(thread("s"), { subgraphs: true });
    expect(waiting.tasks[0]?.state).toMatchObject({ values: { log: expect.arrayContaining(["in6", "think"]) } });

    // Answered by a graph opened afresh, it ends as the same run with every checkpoint kept does.
    const done = await subgraphGraph(await place.saver(tenant)).invoke(new Command({ resume: "out6" }), thread("s"));
    const kept = await subgraphGraph(await place.saver(other, "all")).invoke(new Command({ resume: "out6" }), thread("s"));
    expect(done).toEqual(kept);
    expect(done.log).toContain("out6");
  });

  it("keeps a delta channel's ancestors until it snapshots, so its value reads back whole", async () => {
    const place = makePlace();
    const [tenant] = place.tenants();
    const graph = deltaGraph(await place.saver(tenant));
    const counts: number[] = [];
    for (let i = 1; i <= 10; i++) {
      await graph.invoke({ items: [`u${i}`] }, thread("d"));
      counts.push((await place.rows(tenant, "d"))[""]?.length ?? 0);
    }
    const items = (await deltaGraph(await place.saver(tenant)).getState(thread("d"))).values.items as string[];
    expect(items).toHaveLength(20);
    expect(items.filter((x) => x.startsWith("u"))).toEqual(Array.from({ length: 10 }, (_, k) => `u${k + 1}`));
    // Rows pile up between snapshots and fall back to two after each: bounded, and more than two at times.
    expect(Math.max(...counts)).toBeGreaterThan(2);
    expect(Math.max(...counts)).toBeLessThanOrEqual(12);
    expect(counts.at(-1)).toBeLessThan(Math.max(...counts));
  });

  it("sweeps threads written with the full history down to what they need", async () => {
    const place = makePlace();
    const [tenant, other] = place.tenants();
    await rounds(await place.saver(tenant, "all"), "old", 8);
    await rounds(await place.saver(other, "all"), "old", 2);
    const otherRows = await place.rows(other, "old");
    expect((await place.rows(tenant, "old"))[""]?.length).toBeGreaterThan(20);
    const deleted = await place.sweep(tenant);
    expect(deleted).toBeGreaterThan(20);
    expect((await place.rows(tenant, "old"))[""]).toHaveLength(2);
    expect((await pausingGraph(await place.saver(tenant)).getState(thread("old"))).values).toEqual({
      count: 8,
      log: logOf(1, 8),
    });
    // On SQLite the sweep is the gateway's, over the whole file; on PostgreSQL it is one tenant's schema.
    if (_label === "postgres") expect(await place.rows(other, "old")).toEqual(otherRows);
    expect((await pausingGraph(await place.saver(other)).getState(thread("old"))).values).toEqual({ count: 2, log: logOf(1, 2) });
    expect(await place.sweep(tenant)).toBe(0);
  });
});

describe("PostgresCheckpoints", () => {
  it("sweeps a tenant's threads in the background when its pruning saver first opens; close waits for it", async () => {
    const tenant = `pc_${randomBytes(4).toString("hex")}`;
    schemas.push(checkpointSchema(tenant));
    const full = new PostgresCheckpoints({ url: postgresUrl(), poolSize: 3 }, { history: "all" });
    await rounds(await full.saver(tenant), "old", 6);
    await full.close();
    const count = async () =>
      Number(
        (
          await adminQuery<{ n: string }>(
            `SELECT count(*) AS n FROM "${checkpointSchema(tenant)}".checkpoints WHERE thread_id = 'old'`,
          )
        )[0]?.n,
      );
    expect(await count()).toBeGreaterThan(15);
    const lean = new PostgresCheckpoints({ url: postgresUrl(), poolSize: 3 });
    await lean.saver(tenant);
    await lean.close();
    expect(await count()).toBe(2);
  });
});

describe("SqliteCheckpoints", () => {
  it("prunes with the history it was opened with", async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "antler-prune-")), "antler.db");
    for (const history of ["all", "latest"] as const) {
      const c = new SqliteCheckpoints(file, "normal", { history });
      closers.push(() => c.close());
      await rounds(c.saver("default"), history, 5);
      await rounds(c.saver(), `${history}-lone`, 5);
    }
    const db = new Database(file, { readonly: true });
    closers.push(async () => {
      db.close();
    });
    const count = (t: string) => db.prepare("SELECT count(*) FROM checkpoints WHERE thread_id = ?").pluck().get(t) as number;
    expect(count("all")).toBeGreaterThan(15);
    expect(count("all-lone")).toBeGreaterThan(15);
    expect(count("latest")).toBe(2);
    expect(count("latest-lone")).toBe(2);
  });
});
