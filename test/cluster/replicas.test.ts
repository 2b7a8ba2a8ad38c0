/**
 * Replicas, broadcasts and schema creation on a real PostgreSQL: the live list and the dead
 * list follow heartbeats by the database's clock, a graceful close removes a replica at once,
 * every other replica hears a broadcast (also after its listening connection was cut), and five
 * replicas opening an empty database at once all succeed.
 */
import { hostname } from "node:os";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { ReplicaCoordinator } from "../../src/channels/dispatcher.js";
import { Cluster, ClusterError, MAX_PAYLOAD_BYTES } from "../../src/cluster/index.js";
import { FAST, kill, openReplica, sleep, useClusterDatabase, waitFor } from "./helpers.js";

const db = useClusterDatabase();

describe("replicas", () => {
  it("lists the live replicas, and a killed one moves to the dead list after deadAfter", async () => {
    const a = await openReplica(db.url(), { ...FAST, replicaId: "live-a", adminUrl: "http://10.0.0.1:8001" });
    const b = await openReplica(db.url(), { ...FAST, replicaId: "live-b" });
    const c = await openReplica(db.url(), { ...FAST, replicaId: "live-c" });
    const listed = await a.replicas();
    expect(listed.map((r) => r.id)).toEqual(["live-a", "live-b", "live-c"]);
    expect(listed[0]).toMatchObject({ host: hostname(), pid: process.pid, adminUrl: "http://10.0.0.1:8001", leads: [] });
    expect(listed[1]?.adminUrl).toBeNull();
    const killedAt = performance.now();
    await kill(c);
    await sleep(FAST.heartbeatMs! * 3); // the others keep heartbeating; c does not
    expect((await a.replicas()).map((r) => r.id)).toContain("live-c"); // not dead before deadAfter
    await waitFor(async () => !(await a.replicas()).some((r) => r.id === "live-c"), 5_000, "c to drop out");
    const droppedAfter = performance.now() - killedAt;
    console.info(`a killed replica dropped out of the live list after ${Math.round(droppedAfter)} ms (deadAfter 1.5 s)`);
    expect(droppedAfter).toBeGreaterThan(FAST.deadAfterMs! - FAST.heartbeatMs! - 200);
    expect(await b.deadReplicas()).toEqual(["live-c"]);
    expect((await b.replicas()).map((r) => r.id)).toEqual(["live-a", "live-b"]);
    expect(await b.forgetReplica("live-a")).toBe(false); // alive: not forgotten
    expect(await b.forgetReplica("live-c")).toBe(true);
    expect(await b.deadReplicas()).toEqual([]);
  });

  it("removes a gracefully closed replica at once, with its leases", async () => {
    const a = await openReplica(db.url(), { ...FAST, replicaId: "close-a" });
    const b = await openReplica(db.url(), { ...FAST, replicaId: "close-b" });
    a.lead("telegram", () => undefined);
    await waitFor(async () => (await b.leaderOf("telegram")) === "close-a");
    let held!: () => void;
    const inside = new Promise<void>((resolve) => (held = resolve));
    void a.withConversation("t1", "k", () => {
      held();
      return new Promise(() => undefined);
    });
    await inside;
    await a.close();
    expect((await b.replicas()).map((r) => r.id)).toEqual(["close-b"]);
    expect(await b.deadReplicas()).toEqual([]);
    expect(await b.leaderOf("telegram")).toBeNull();
    expect(await b.heldElsewhere("t1", "k")).toBe(false);
  });

  it("gives each replica a distinct default id: host, pid and a random part", async () => {
    const [a, b] = await Promise.all([openReplica(db.url(), FAST), openReplica(db.url(), FAST)]);
    expect(a.id).toMatch(new RegExp(`^${hostname()}-${process.pid}-[0-9a-f]{6}$`));
    expect(a.id).not.toBe(b.id);
  });

  it("refuses timings that cannot work, naming them", async () => {
    const pool = new pg.Pool({ connectionString: db.url() });
    try {
      await expect(Cluster.open(pool, { heartbeatMs: 5_000, leaderTtlMs: 4_000 })).rejects.toThrow(/leaderTtlMs/);
      await expect(Cluster.open(pool, { notifyChannel: "x; DROP TABLE y" })).rejects.toThrow(ClusterError);
    } finally {
      await pool.end();
    }
  });
});

describe("broadcast", () => {
  it("reaches every other replica, not the sender", async () => {
    const replicas = await Promise.all([0, 1, 2, 3].map((i) => openReplica(db.url(), { ...FAST, replicaId: `b${i}` })));
    const heard = new Map<string, Array<{ payload: unknown; from: string }>>();
    for (const r of replicas) r.on("stop", (payload, from) => heard.set(r.id, [...(heard.get(r.id) ?? []), { payload, from }]));
    await replicas[0]!.broadcast("stop", { tenant: "t1", key: "slack:T:C:1" });
    await waitFor(() => heard.size === 3, 5_000, "three replicas to hear it");
    await sleep(200);
    expect(heard.has("b0")).toBe(false);
    for (const id of ["b1", "b2", "b3"])
      expect(heard.get(id)).toEqual([{ payload: { tenant: "t1", key: "slack:T:C:1" }, from: "b0" }]);
  });

  it("carries the stop request the dispatcher sends", async () => {
    const [a, b] = await Promise.all([openReplica(db.url(), FAST), openReplica(db.url(), FAST)]);
    const coordinator: ReplicaCoordinator = a; // the dispatcher takes a Cluster as it is
    const stops: string[] = [];
    b.onStopConversation((tenant, key) => stops.push(`${tenant}/${key}`));
    await coordinator.stopElsewhere("t1", "telegram:0:42");
    await waitFor(() => stops.length === 1);
    expect(stops).toEqual(["t1/telegram:0:42"]);
  });

  it("refuses a payload larger than a notification carries, and the cluster's own topics", async () => {
    const a = await openReplica(db.url(), FAST);
    await expect(a.broadcast("big", "x".repeat(MAX_PAYLOAD_BYTES))).rejects.toMatchObject({ code: "broadcast_too_large" });
    await a.broadcast("fits", "x".repeat(MAX_PAYLOAD_BYTES - 100));
    await expect(a.broadcast("antler.replica-left", {})).rejects.toMatchObject({ code: "cluster_usage" });
  });

  it("stays within one schema: a deployment on another search path does not hear it", async () => {
    const admin = new pg.Client({ connectionString: db.url() });
    await admin.connect();
    try {
      await admin.query("CREATE SCHEMA IF NOT EXISTS scope_a; CREATE SCHEMA IF NOT EXISTS scope_b");
    } finally {
      await admin.end();
    }
    const inSchema = (schema: string) => {
      const url = new URL(db.url());
      url.searchParams.set("options", `-c search_path=${schema}`);
      return url.toString();
    };
    const [a1, a2, b1] = await Promise.all([
      openReplica(inSchema("scope_a"), FAST),
      openReplica(inSchema("scope_a"), FAST),
      openReplica(inSchema("scope_b"), FAST),
    ]);
    const heard: string[] = [];
    a2.on("hello", () => heard.push("a2"));
    b1.on("hello", () => heard.push("b1"));
    await a1.broadcast("hello", {});
    await waitFor(() => heard.includes("a2"));
    await sleep(200);
    expect(heard).toEqual(["a2"]);
  });

  it("listens again after the server ended every connection", async () => {
    const [a, b] = await Promise.all([
      openReplica(db.url(), { ...FAST, replicaId: "cut-listener" }),
      openReplica(db.url(), FAST),
    ]);
    const heard: unknown[] = [];
    a.on("ping", (payload) => heard.push(payload));
    const admin = new pg.Client({ connectionString: db.url() });
    await admin.connect();
    try {
      // As a server restart or failover would: the listening connection goes with the rest.
      const { rowCount } = await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
      );
      expect(rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    await waitFor(
      async () => {
        await b.broadcast("ping", heard.length).catch(() => undefined);
        await sleep(100);
        return heard.length > 0;
      },
      10_000,
      "a broadcast to arrive after the reconnect",
    );
    expect((await b.replicas()).map((r) => r.id)).toContain("cut-listener");
  });
});

describe("schema", () => {
  it("is created by five replicas opening an empty database at once", async () => {
    const admin = new pg.Client({ connectionString: db.url() });
    await admin.connect();
    try {
      await admin.query("CREATE SCHEMA race");
    } finally {
      await admin.end();
    }
    const url = new URL(db.url());
    url.searchParams.set("options", "-c search_path=race");
    const replicas = await Promise.all([0, 1, 2, 3, 4].map((i) => openReplica(url.toString(), { ...FAST, replicaId: `s${i}` })));
    expect((await replicas[0]!.replicas()).map((r) => r.id).sort()).toEqual(["s0", "s1", "s2", "s3", "s4"]);
    const check = new pg.Client({ connectionString: db.url() });
    await check.connect();
    try {
      const { rows } = await check.query("SELECT version FROM race.antler_migrations WHERE name = 'cluster'");
      expect(rows).toEqual([{ version: 1 }]);
    } finally {
      await check.end();
    }
  });
});
