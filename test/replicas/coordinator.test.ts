/**
 * The replicas' coordination on a real PostgreSQL: several coordinators in this process, each
 * with its own pool, stand for gateway processes. `halt()` is what SIGKILL leaves behind (nothing
 * given up); `close()` is a clean stop.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Coordinator } from "../../src/replicas/coordinator.js";
import { replicaTiming } from "../../src/replicas/timing.js";
import { eventually, sleep, testLogger } from "../../src/testing/gateway.js";
import { PartitionProxy } from "../helpers/partition-proxy.js";
import { freshSchema } from "../helpers/postgres.js";

const open: Coordinator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function replicas(n: number, timing: { heartbeatMs?: number; leaseMs?: number } = {}) {
  const { url } = await freshSchema("repl");
  const list = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      Coordinator.open({
        connection: { url },
        id: `r${i}`,
        logger: testLogger(),
        heartbeatMs: 200,
        leaseMs: 800,
        ...timing,
      }),
    ),
  );
  open.push(...list);
  return list;
}

describe("replica coordination", () => {
  it("elects exactly one leader per channel; a killed leader's channel moves on after its lease", async () => {
    const rs = await replicas(3);
    const leading = new Map<string, boolean>();
    await Promise.all(rs.map((r) => r.lead("telegram", (on) => leading.set(r.id, on))));
    await eventually(() => [...leading.values()].filter(Boolean).length === 1, 5_000, "one leader");
    await sleep(600);
    expect([...leading.values()].filter(Boolean)).toHaveLength(1);
    const first = rs.find((r) => r.leads("telegram"))!;
    expect(await rs[0]!.leaderOf("telegram")).toBe(first.id);
    const killedAt = Date.now();
    await first.halt();
    open.splice(open.indexOf(first), 1);
    const next = await eventually(() => rs.find((r) => r !== first && r.leads("telegram")), 5_000, "a new leader");
    expect(Date.now() - killedAt).toBeLessThan(800 + 200 * 3);
    expect(rs.filter((r) => r !== first && r.leads("telegram"))).toEqual([next]);
  });

  it("a resigned channel is taken by another replica at once, not at its next heartbeat", async () => {
    // Heartbeats far apart: only the broadcast of the release can make the takeover quick.
    const rs = await replicas(2, { heartbeatMs: 20_000, leaseMs: 70_000 });
    const [a, b] = rs as [Coordinator, Coordinator];
    await a.lead("telegram", () => undefined);
    const told: boolean[] = [];
    await b.lead("telegram", (on) => told.push(on));
    expect(a.leads("telegram")).toBe(true);
    expect(b.leads("telegram")).toBe(false);
    await a.resign("telegram");
    await eventually(() => b.leads("telegram"), 10_000, "B leads after A resigned");
    expect(told).toEqual([true]);
    expect(await a.leaderOf("telegram")).toBe("r1");
    expect(a.leads("telegram")).toBe(false);
  });

  it("makes a leader cut off from the database step down before another replica can take its channel", async () => {
    const { url } = await freshSchema("repl");
    const { proxy, url: through } = await PartitionProxy.start(url);
    try {
      const timing = { heartbeatMs: 200, leaseMs: 1_000 };
      const events: Array<{ who: string; leading: boolean; at: number }> = [];
      const cut = await Coordinator.open({ connection: { url: through }, id: "cut", logger: testLogger(), ...timing });
      await cut.lead("telegram", (leading) => events.push({ who: "cut", leading, at: performance.now() }));
      await eventually(() => cut.leads("telegram"), 3_000, "cut leads");
      const other = await Coordinator.open({ connection: { url }, id: "other", logger: testLogger(), ...timing });
      open.push(other);
      await other.lead("telegram", (leading) => events.push({ who: "other", leading, at: performance.now() }));
      proxy.blackhole();
      await eventually(() => other.leads("telegram"), 10_000, "the other replica leads");
      const down = events.find((e) => e.who === "cut" && !e.leading);
      const up = events.find((e) => e.who === "other" && e.leading);
      expect(down, "the cut-off leader stepped down").toBeDefined();
      // Never two leaders: the silent one gave up before the other could take the lease.
      expect(down!.at).toBeLessThan(up!.at);
      await cut.halt();
    } finally {
      await proxy.close();
    }
  });

  it("tells a conversation's work that its lease lapsed before another replica can take it", async () => {
    const { url } = await freshSchema("repl");
    const { proxy, url: through } = await PartitionProxy.start(url);
    try {
      const timing = { heartbeatMs: 200, leaseMs: 1_000 };
      const cut = await Coordinator.open({ connection: { url: through }, id: "cut", logger: testLogger(), ...timing });
      const other = await Coordinator.open({ connection: { url }, id: "other", logger: testLogger(), ...timing });
      open.push(other);
      let lostAt = 0;
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const cutWork = cut
        .withConversation("default", "k", async (lost) => {
          lost.addEventListener("abort", () => {
            lostAt = performance.now();
          });
          await held;
        })
        .catch(() => undefined);
      await eventually(() => other.heldElsewhere("default", "k"), 3_000, "cut holds k");
      proxy.blackhole();
      let tookAt = 0;
      await other.withConversation("default", "k", async () => {
        tookAt = performance.now();
      });
      expect(lostAt, "the cut-off holder was told").toBeGreaterThan(0);
      expect(lostAt).toBeLessThan(tookAt);
      release();
      await cut.halt();
      await cutWork;
    } finally {
      await proxy.close();
    }
  });

  it("fails only the caller when a conversation's lease cannot be asked for (no unhandled rejection ends the process)", async () => {
    const { url } = await freshSchema("repl");
    const { proxy, url: through } = await PartitionProxy.start(url);
    try {
      const cut = await Coordinator.open({ connection: { url: through }, id: "cut", logger: testLogger(), heartbeatMs: 200 });
      proxy.blackhole();
      // The query gives up after two heartbeats; vitest fails the run on any unhandled rejection.
      await expect(cut.withConversation("default", "k", async () => "ran")).rejects.toThrow();
      await cut.halt();
    } finally {
      await proxy.close();
    }
  });

  it("hands a channel over at once on a clean stop", async () => {
    const rs = await replicas(2, { heartbeatMs: 300, leaseMs: 30_000 });
    await Promise.all(rs.map((r) => r.lead("slack", () => undefined)));
    const leader = await eventually(() => rs.find((r) => r.leads("slack")), 5_000, "a leader");
    const other = rs.find((r) => r !== leader)!;
    await leader.close();
    const stoppedAt = Date.now();
    await eventually(() => other.leads("slack"), 5_000, "the other replica leads");
    // The lease would last 30 s: the handover came from the goodbye, not from expiry.
    expect(Date.now() - stoppedAt).toBeLessThan(2_000);
  });

  it("runs one conversation on one replica at a time, and different conversations side by side", async () => {
    const rs = await replicas(3);
    const spans: Array<{ key: string; start: number; end: number }> = [];
    const work = (key: string) => async () => {
      const start = performance.now();
      await sleep(15);
      spans.push({ key, start, end: performance.now() });
    };
    await Promise.all(
      rs.flatMap((r) => Array.from({ length: 8 }, () => r.withConversation("default", "chat-1", work("chat-1")))),
    );
    const one = spans.filter((s) => s.key === "chat-1").sort((a, b) => a.start - b.start);
    expect(one).toHaveLength(24);
    for (let i = 1; i < one.length; i++) expect(one[i]!.start).toBeGreaterThanOrEqual(one[i - 1]!.end);
    // Two conversations overlap in time.
    const both = await Promise.all([
      rs[0]!.withConversation("default", "a", async () => {
        const at = performance.now();
        await sleep(300);
        return at;
      }),
      rs[1]!.withConversation("default", "b", async () => {
        const at = performance.now();
        await sleep(300);
        return at;
      }),
    ]);
    expect(Math.abs(both[0] - both[1])).toBeLessThan(250);
  });

  it("frees a killed replica's conversation after its lease, and says who holds one", async () => {
    const [a, b] = await replicas(2);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    void a!.withConversation("default", "k", () => held).catch(() => undefined);
    await eventually(() => b!.heldElsewhere("default", "k"), 3_000, "a holds k");
    expect(await a!.heldElsewhere("default", "k")).toBe(false);
    await a!.halt();
    open.splice(open.indexOf(a!), 1);
    const t0 = Date.now();
    await b!.withConversation("default", "k", async () => undefined);
    expect(Date.now() - t0).toBeLessThan(3_000);
    release();
  });

  it("lists live replicas with what they lead; a killed one drops out", async () => {
    const [a, b, c] = await replicas(3);
    await a!.lead("telegram", () => undefined);
    const live = await a!.replicas();
    expect(live.map((r) => r.id).sort()).toEqual(["r0", "r1", "r2"]);
    expect(live.find((r) => r.id === "r0")?.leads).toEqual(["telegram"]);
    expect(live.every((r) => r.pid === process.pid)).toBe(true);
    await c!.halt();
    open.splice(open.indexOf(c!), 1);
    await eventually(async () => !(await b!.liveIds()).has("r2"), 5_000, "r2 counted dead");
  });

  it("counts a killed replica dead as soon as its conversation leases can lapse, not later", async () => {
    const timing = { heartbeatMs: 200, leaseMs: 1_000 };
    const [a, b] = await replicas(2, timing);
    void a!.withConversation("default", "k", () => new Promise(() => undefined)).catch(() => undefined);
    await eventually(() => b!.heldElsewhere("default", "k"), 3_000, "a holds k");
    await a!.halt();
    open.splice(open.indexOf(a!), 1);
    // The moment b can take a's conversation, a is dead to b: its heartbeat, written before it
    // renewed the lease, is older than the lease by the database's clock.
    await b!.withConversation("default", "k", async () => undefined);
    expect(await b!.liveIds()).toEqual(new Set(["r1"]));
  });

  it("derives every timing from the lease", () => {
    expect(replicaTiming()).toEqual({ heartbeatMs: 1_500, leaseMs: 5_000, deadAfterMs: 5_000, sweepMs: 1_500 });
    expect(replicaTiming({ leaseMs: 1_000, heartbeatMs: 200 })).toEqual({
      heartbeatMs: 200,
      leaseMs: 1_000,
      deadAfterMs: 1_000,
      sweepMs: 200,
    });
    expect(() => replicaTiming({ leaseMs: 1_000, heartbeatMs: 500 })).toThrow(/does not fit a lease/);
  });

  it("carries broadcasts to every other replica, not to itself", async () => {
    const rs = await replicas(3);
    const got: string[] = [];
    for (const r of rs) r.on("stop", (data, from) => got.push(`${r.id}<-${from}:${(data as { key: string }).key}`));
    await rs[0]!.broadcast("stop", { key: "chat-9" });
    await eventually(() => got.length === 2, 3_000, "two deliveries");
    expect(got.sort()).toEqual(["r1<-r0:chat-9", "r2<-r0:chat-9"]);
  });

  it("sets its tables up once when five replicas start at the same moment", async () => {
    const rs = await replicas(5);
    expect((await rs[4]!.replicas()).length).toBe(5);
  });
});
