/**
 * Conversation leases between replicas on a real PostgreSQL: works on one conversation never
 * overlap whichever replica runs them, a killed holder's lease is taken once it expires,
 * different conversations run side by side, and a lease is released when the work throws.
 */
import { describe, expect, it } from "vitest";
import { ClusterError } from "../../src/cluster/index.js";
import { FAST, kill, openReplica, PartitionProxy, sleep, useClusterDatabase, waitFor } from "./helpers.js";

const db = useClusterDatabase();

interface Span {
  replica: string;
  enter: number;
  exit: number;
}

function overlapping(spans: Span[]): Array<[Span, Span]> {
  const sorted = [...spans].sort((a, b) => a.enter - b.enter);
  const bad: Array<[Span, Span]> = [];
  for (let i = 1; i < sorted.length; i++) if (sorted[i]!.enter < sorted[i - 1]!.exit) bad.push([sorted[i - 1]!, sorted[i]!]);
  return bad;
}

describe("conversation leases", () => {
  it("never lets two works on one conversation overlap: 3 replicas × 20 works", async () => {
    const replicas = await Promise.all([0, 1, 2].map((i) => openReplica(db.url(), { ...FAST, replicaId: `r${i}` })));
    const spans: Span[] = [];
    const started = performance.now();
    await Promise.all(
      replicas.flatMap((cluster) =>
        Array.from({ length: 20 }, () =>
          cluster.withConversation("t1", "telegram:w:chat", async () => {
            const enter = performance.now();
            await sleep(5 + Math.random() * 15);
            spans.push({ replica: cluster.id, enter, exit: performance.now() });
          }),
        ),
      ),
    );
    console.info(`60 works on one conversation over 3 replicas took ${Math.round(performance.now() - started)} ms`);
    expect(spans).toHaveLength(60);
    expect(overlapping(spans)).toEqual([]);
    expect(new Set(spans.map((s) => s.replica)).size).toBe(3);
    expect(await replicas[0]!.heldElsewhere("t1", "telegram:w:chat")).toBe(false);
  }, 40_000);

  it("keeps a lease while a long work runs, longer than its TTL", async () => {
    const [a, b] = await Promise.all([openReplica(db.url(), FAST), openReplica(db.url(), FAST)]);
    let bEntered = 0;
    let aExited = 0;
    let lost = false;
    const long = a.withConversation("t1", "long", async (signal) => {
      await sleep(FAST.conversationTtlMs! * 2);
      lost = signal.aborted;
      aExited = performance.now();
    });
    await waitFor(() => b.heldElsewhere("t1", "long"));
    await b.withConversation("t1", "long", async () => {
      bEntered = performance.now();
    });
    await long;
    expect(lost).toBe(false);
    expect(bEntered).toBeGreaterThanOrEqual(aExited);
  });

  it("lets another replica take a killed holder's lease once it expires, not before", async () => {
    const [a, b] = await Promise.all([openReplica(db.url(), FAST), openReplica(db.url(), FAST)]);
    let held!: () => void;
    const entered = new Promise<void>((resolve) => (held = resolve));
    void a.withConversation("t1", "k", () => {
      held();
      return new Promise(() => undefined); // never ends: the process dies inside it
    });
    await entered;
    const killedAt = performance.now();
    await kill(a);
    expect(await b.heldElsewhere("t1", "k")).toBe(true);
    const gotAt = await b.withConversation("t1", "k", async () => performance.now());
    const waited = gotAt - killedAt;
    console.info(`a killed holder's conversation lease was taken after ${Math.round(waited)} ms (ttl 1.5 s)`);
    expect(waited).toBeGreaterThan(FAST.conversationTtlMs! - FAST.heartbeatMs! - 200);
    expect(waited).toBeLessThan(FAST.conversationTtlMs! + 1_500);
  });

  it("runs different conversations side by side", async () => {
    const [a, b] = await Promise.all([openReplica(db.url(), FAST), openReplica(db.url(), FAST)]);
    const started = performance.now();
    const spans = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? a : b).withConversation("t1", `key-${i}`, async () => {
          const enter = performance.now();
          await sleep(400);
          return { replica: "", enter, exit: performance.now() };
        }),
      ),
    );
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(Math.max(...spans.map((s) => s.enter)) - Math.min(...spans.map((s) => s.enter))).toBeLessThan(300);
  });

  it("keeps tenants apart: one key under two tenants is two leases", async () => {
    const [a, b] = await Promise.all([openReplica(db.url(), FAST), openReplica(db.url(), FAST)]);
    let both = false;
    let inA = false;
    await Promise.all([
      a.withConversation("tenant-a", "same", async () => {
        inA = true;
        await sleep(300);
        inA = false;
      }),
      b.withConversation("tenant-b", "same", async () => {
        await sleep(100);
        both = inA;
      }),
    ]);
    expect(both).toBe(true);
  });

  it("releases the lease when the work throws, and the error reaches the caller", async () => {
    const [a, b] = await Promise.all([openReplica(db.url(), FAST), openReplica(db.url(), { ...FAST, pollMs: 5_000 })]);
    await expect(
      a.withConversation("t1", "boom", async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await b.heldElsewhere("t1", "boom")).toBe(false);
    const at = performance.now();
    await b.withConversation("t1", "boom", async () => undefined);
    expect(performance.now() - at).toBeLessThan(1_000);
  });

  it("wakes a waiting replica on release instead of waiting for its next poll", async () => {
    const a = await openReplica(db.url(), FAST);
    const b = await openReplica(db.url(), { ...FAST, pollMs: 5_000 });
    let release!: () => void;
    const holding = a.withConversation("t1", "wake", () => new Promise<void>((resolve) => (release = resolve)));
    await waitFor(() => b.heldElsewhere("t1", "wake"));
    const waiting = b.withConversation("t1", "wake", async () => performance.now());
    await sleep(300);
    const releasedAt = performance.now();
    release();
    await holding;
    const gotAt = await waiting;
    expect(gotAt - releasedAt).toBeLessThan(1_000);
  });

  it("ends a wait when its signal aborts, and serializes calls within one replica", async () => {
    const a = await openReplica(db.url(), FAST);
    let release!: () => void;
    let inside = 0;
    let most = 0;
    const first = a.withConversation("t1", "local", async () => {
      inside++;
      most = Math.max(most, inside);
      await new Promise<void>((resolve) => (release = resolve));
      inside--;
    });
    const second = a.withConversation("t1", "local", async () => {
      inside++;
      most = Math.max(most, inside);
      inside--;
    });
    const aborted = a.withConversation("t1", "local", async () => undefined, AbortSignal.timeout(200));
    await expect(aborted).rejects.toThrow();
    release();
    await Promise.all([first, second]);
    expect(most).toBe(1);
  });

  it("tells the work its lease was lost when the database stays unreachable past the TTL", async () => {
    const { proxy, url } = await PartitionProxy.start(db.url());
    try {
      const cut = await openReplica(db.url(), FAST, url);
      const other = await openReplica(db.url(), FAST);
      let lostAt = 0;
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      void cut.withConversation("t1", "cut", async (signal) => {
        entered();
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
        lostAt = performance.now();
      });
      await inside;
      proxy.blackhole();
      const gotAt = await other.withConversation("t1", "cut", async () => performance.now());
      expect(lostAt).toBeGreaterThan(0);
      expect(lostAt).toBeLessThan(gotAt);
      await cut.halt();
    } finally {
      await proxy.close();
    }
  });

  it("tells running work its lease is gone on close, and refuses new work after", async () => {
    const a = await openReplica(db.url(), FAST);
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const running = a.withConversation("t1", "x", async (signal) => {
      entered();
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
      return signal.reason as Error;
    });
    await inside;
    await a.close();
    expect((await running).message).toMatch(/closing/);
    await expect(a.withConversation("t1", "x", async () => undefined)).rejects.toThrow(ClusterError);
  });
});
