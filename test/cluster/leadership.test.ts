/**
 * Channel leadership between replicas on a real PostgreSQL: one leader at a time, a killed
 * leader's channel taken over within 10 s (with short timings and with the defaults), a graceful
 * close handing over at once, and a leader cut off from the database stepping down before
 * another replica can start the channel.
 */
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../src/cluster/index.js";
import { FAST, kill, openReplica, PartitionProxy, sleep, useClusterDatabase, waitFor } from "./helpers.js";

const db = useClusterDatabase();

/** Who each replica believes leads, with when it started believing so, and a check that two never overlap. */
function tracker() {
  const leading = new Set<string>();
  const became = new Map<string, number>();
  const lost = new Map<string, number>();
  let overlaps = 0;
  const listener = (id: string) => (now: boolean) => {
    if (now) {
      if (leading.size > 0) overlaps++;
      leading.add(id);
      became.set(id, performance.now());
    } else {
      leading.delete(id);
      lost.set(id, performance.now());
    }
  };
  return { leading, became, lost, listener, overlaps: () => overlaps };
}

async function threeCompeting(channel: string, options = FAST) {
  const t = tracker();
  const clusters: Cluster[] = [];
  for (let i = 0; i < 3; i++) {
    const cluster = await openReplica(db.url(), { ...options, replicaId: `r${i}` });
    cluster.lead(channel, t.listener(cluster.id));
    clusters.push(cluster);
  }
  const first = await waitFor(() => (t.leading.size === 1 ? [...t.leading][0] : undefined), 10_000, "a first leader");
  return { t, clusters, first, leader: clusters.find((c) => c.id === first)! };
}

describe("channel leadership", () => {
  it("gives a channel to exactly one of three replicas, and the database agrees", async () => {
    const { t, clusters, first } = await threeCompeting("telegram");
    await sleep(1_500); // several renewals: nobody else gets it meanwhile
    expect([...t.leading]).toEqual([first]);
    expect(t.overlaps()).toBe(0);
    for (const c of clusters) expect(await c.leaderOf("telegram")).toBe(first);
    expect(await clusters[0]!.leaders()).toEqual(new Map([["telegram", first]]));
    const live = await clusters[0]!.replicas();
    expect(live.find((r) => r.id === first)?.leads).toEqual(["telegram"]);
  });

  it("moves a killed leader's channel to another replica within the lease (short timings)", async () => {
    const { t, clusters, leader } = await threeCompeting("slack");
    const killedAt = performance.now();
    await kill(leader);
    t.leading.delete(leader.id);
    const next = await waitFor(() => (t.leading.size === 1 ? [...t.leading][0] : undefined), 10_000, "a new leader");
    const takeover = t.became.get(next)! - killedAt;
    console.info(`takeover after a killed leader (ttl 1.5 s, heartbeat 0.3 s): ${Math.round(takeover)} ms`);
    expect(takeover).toBeLessThan(FAST.leaderTtlMs! + FAST.heartbeatMs! + 1_000);
    expect(next).not.toBe(leader.id);
    expect(t.overlaps()).toBe(0);
    expect(await clusters.find((c) => c.id === next)!.leaderOf("slack")).toBe(next);
  });

  it("moves a killed leader's channel within 10 s with the default timings", async () => {
    const { t, leader } = await threeCompeting("discord", {});
    await sleep(2_500); // the leader renews at least once, as it would in production
    const killedAt = performance.now();
    await kill(leader);
    t.leading.delete(leader.id);
    const next = await waitFor(() => (t.leading.size === 1 ? [...t.leading][0] : undefined), 12_000, "a new leader");
    const takeover = t.became.get(next)! - killedAt;
    console.info(`takeover after a killed leader (default ttl 6 s, heartbeat 2 s): ${Math.round(takeover)} ms`);
    expect(takeover).toBeLessThan(10_000);
    expect(takeover).toBeGreaterThan(2_000); // it did wait for the lease: no instant steal
  }, 25_000);

  it("hands over at once on a graceful close, after the old leader was told to stop", async () => {
    const { t, leader } = await threeCompeting("feishu", {});
    const closedAt = performance.now();
    await leader.close();
    expect(t.lost.get(leader.id)).toBeLessThanOrEqual(performance.now());
    const next = await waitFor(() => (t.leading.size === 1 ? [...t.leading][0] : undefined), 10_000, "a new leader");
    const handover = t.became.get(next)! - closedAt;
    console.info(`handover after a graceful close (default timings): ${Math.round(handover)} ms`);
    expect(handover).toBeLessThan(3_000);
    expect(t.became.get(next)!).toBeGreaterThan(t.lost.get(leader.id)!);
    expect(t.overlaps()).toBe(0);
  });

  it("resign gives the channel up at once and the next replica takes it", async () => {
    const t = tracker();
    const a = await openReplica(db.url(), { ...FAST, replicaId: "a" });
    const b = await openReplica(db.url(), {
      ...FAST,
      replicaId: "b",
      heartbeatMs: 5_000,
      leaderTtlMs: 15_000,
      conversationTtlMs: 15_000,
      deadAfterMs: 20_000,
    });
    const lead = a.lead("dingtalk", t.listener("a"));
    await waitFor(() => t.leading.has("a"));
    b.lead("dingtalk", t.listener("b"));
    await sleep(300);
    expect([...t.leading]).toEqual(["a"]);
    const at = performance.now();
    await lead.resign();
    expect(lead.leading).toBe(false);
    await waitFor(() => t.leading.has("b"), 3_000, "b to lead");
    // b polls only every 5 s: it was woken by a's release.
    expect(t.became.get("b")! - at).toBeLessThan(1_500);
  });

  it("makes a leader cut off from the database step down before anyone else can take its channel", async () => {
    const { proxy, url } = await PartitionProxy.start(db.url());
    try {
      const t = tracker();
      const cut = await openReplica(db.url(), { ...FAST, replicaId: "cut" }, url);
      cut.lead("web", t.listener("cut"));
      await waitFor(() => t.leading.has("cut"));
      const other = await openReplica(db.url(), { ...FAST, replicaId: "other" });
      other.lead("web", t.listener("other"));
      await sleep(600);
      proxy.blackhole();
      const cutAt = performance.now();
      await waitFor(() => t.leading.has("other"), 10_000, "the other replica to lead");
      const stepDown = t.lost.get("cut");
      expect(stepDown).toBeDefined();
      console.info(
        `cut-off leader stepped down after ${Math.round(stepDown! - cutAt)} ms; the other led after ${Math.round(t.became.get("other")! - cutAt)} ms`,
      );
      expect(stepDown!).toBeLessThan(t.became.get("other")!);
      expect(t.overlaps()).toBe(0);
      await cut.halt();
    } finally {
      await proxy.close();
    }
  });
});
