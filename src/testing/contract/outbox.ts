/**
 * The binding-store contract's outbox part (src/bindings/outbox.ts): idempotent enqueue, claims
 * under a lease in each conversation's order, updates only by the holder, listing and pruning.
 * `claimRace` is also run by the replica part, with stores of several replicas.
 */
import { expect, it } from "vitest";
import type { NewOutboxEntry, OutboxEntry } from "../../bindings/outbox.js";
import type { BindingStore } from "../../bindings/types.js";

/** The store under test and the clock it reads (binding-store.ts's `StoreUnderTest`). */
export interface Subject {
  now: number;
  readonly store: BindingStore;
}

/** A new entry `id` of conversation `key` on `channel`, its idempotency key derived from the id. */
export function outboxEntry(id: string, key = "k", channel = "tg", more: Partial<NewOutboxEntry> = {}): NewOutboxEntry {
  return {
    id,
    idempotencyKey: `idem-${id}`,
    bodyHash: `hash-${id}`,
    kind: "send",
    channel,
    key,
    payload: { text: `message ${id}`, nul: "a\u0000b" },
    source: "api",
    ...more,
  };
}

const ids = (entries: OutboxEntry[]) => entries.map((e) => e.id);

export function outboxPart(s: Subject): void {
  enqueuePart(s);
  claimsPart(s);
  leasesPart(s);
  changesPart(s);
}

/** Enqueueing: once per idempotency key and tenant. */
function enqueuePart(s: Subject): void {
  it("enqueues once per idempotency key and tenant, whatever the second body", async () => {
    const first = await s.store.enqueueOutbound(outboxEntry("o1"));
    expect(first.created).toBe(true);
    expect(first.entry).toEqual({
      ...outboxEntry("o1"),
      state: "queued",
      attempts: 0,
      nextAttemptAt: s.now,
      createdAt: s.now,
      updatedAt: s.now,
    });
    s.now += 5;
    const again = await s.store.enqueueOutbound({ ...outboxEntry("o2"), idempotencyKey: "idem-o1", payload: { other: 1 } });
    expect(again).toEqual({ entry: first.entry, created: false });
    expect(await s.store.getOutbound("o2")).toBeUndefined();
    expect(await s.store.getOutboundByKey("idem-o1")).toEqual(first.entry);
    expect(await s.store.getOutbound("o1")).toEqual(first.entry);
    // Another tenant has keys (and ids) of its own.
    const other = s.store.forTenant("other");
    expect(await other.getOutbound("o1")).toBeUndefined();
    expect(await other.getOutboundByKey("idem-o1")).toBeUndefined();
    expect((await other.enqueueOutbound(outboxEntry("o1"))).created).toBe(true);
    expect(await s.store.listOutbound()).toHaveLength(1);
    const later = await s.store.enqueueOutbound(outboxEntry("o3", "k", "tg", { notBefore: s.now + 100 }));
    expect(later.entry.nextAttemptAt).toBe(s.now + 100);
  });
}

/** Claims: due entries, one conversation at a time, oldest first. */
function claimsPart(s: Subject): void {
  it("claims each conversation's oldest unfinished entry once it is due, under a lease", async () => {
    for (const [id, key, channel, notBefore] of [
      ["a1", "A", "tg", undefined],
      ["a2", "A", "tg", undefined],
      ["b1", "B", "tg", s.now + 50],
      ["b2", "B", "tg", undefined],
      ["c1", "C", "slack", undefined],
    ] as const) {
      await s.store.enqueueOutbound(outboxEntry(id, key, channel, notBefore === undefined ? {} : { notBefore }));
    }
    const claimed = await s.store.claimOutbound("r1", ["tg"], s.now, 1_000, 10);
    expect(ids(claimed)).toEqual(["a1"]);
    expect(claimed[0]).toMatchObject({ state: "sending", owner: "r1", leaseUntil: s.now + 1_000, attempts: 0 });
    expect(await s.store.getOutbound("a1")).toEqual(claimed[0]);
    // a1 is held: a2 waits behind it; b1 is not due, and b2 waits behind b1.
    expect(await s.store.claimOutbound("r2", ["tg"], s.now, 1_000, 10)).toEqual([]);
    expect(await s.store.updateOutbound("a1", "r1", { state: "sent", attempts: 1, result: { ids: ["m1"] }, sentAt: s.now })).toBe(
      true,
    );
    expect(await s.store.getOutbound("a1")).toMatchObject({ state: "sent", attempts: 1, result: { ids: ["m1"] }, sentAt: s.now });
    expect((await s.store.getOutbound("a1"))?.owner).toBeUndefined();
    expect((await s.store.getOutbound("a1"))?.leaseUntil).toBeUndefined();
    expect(ids(await s.store.claimOutbound("r2", ["tg"], s.now, 1_000, 10))).toEqual(["a2"]);
    s.now += 50;
    expect(ids(await s.store.claimOutbound("r2", ["tg", "slack"], s.now, 1_000, 10))).toEqual(["b1", "c1"]);
    expect(await s.store.claimOutbound("r2", [], s.now, 1_000, 10)).toEqual([]);
  });

  it("keeps younger entries waiting while an older one waits for its next attempt", async () => {
    await s.store.enqueueOutbound(outboxEntry("a1"));
    await s.store.enqueueOutbound(outboxEntry("a2"));
    await s.store.claimOutbound("r1", ["tg"], s.now, 1_000, 10);
    expect(
      await s.store.updateOutbound("a1", "r1", { state: "queued", attempts: 1, nextAttemptAt: s.now + 200, error: "busy" }),
    ).toBe(true);
    expect(await s.store.getOutbound("a1")).toMatchObject({ state: "queued", error: "busy", nextAttemptAt: s.now + 200 });
    expect((await s.store.getOutbound("a1"))?.owner).toBeUndefined();
    expect(await s.store.claimOutbound("r1", ["tg"], s.now + 199, 1_000, 10)).toEqual([]);
    const retried = await s.store.claimOutbound("r1", ["tg"], s.now + 200, 1_000, 10);
    expect(retried.map((e) => [e.id, e.attempts, e.error])).toEqual([["a1", 1, "busy"]]);
    // A failed entry is finished too: the next one goes.
    expect(await s.store.updateOutbound("a1", "r1", { state: "failed", error: "gone", errorCode: "target_unreachable" })).toBe(
      true,
    );
    expect(ids(await s.store.claimOutbound("r1", ["tg"], s.now + 200, 1_000, 10))).toEqual(["a2"]);
  });
}

/** Leases: an entry whose holder died goes to another; claimers at once. */
function leasesPart(s: Subject): void {
  it("hands an entry whose lease ran out to another claimer; a running one stays running", async () => {
    await s.store.enqueueOutbound(outboxEntry("a1"));
    await s.store.enqueueOutbound(outboxEntry("a2"));
    await s.store.claimOutbound("r1", ["tg"], s.now, 1_000, 10);
    expect(await s.store.claimOutbound("r2", ["tg"], s.now + 1_000, 1_000, 10)).toEqual([]);
    const taken = await s.store.claimOutbound("r2", ["tg"], s.now + 1_001, 1_000, 10);
    expect(taken).toMatchObject([{ id: "a1", state: "sending", owner: "r2", leaseUntil: s.now + 2_001 }]);
    // The old holder no longer holds it.
    expect(await s.store.updateOutbound("a1", "r1", { state: "sent" })).toBe(false);
    expect(
      await s.store.updateOutbound("a1", "r2", { state: "running", leaseUntil: s.now + 5_000, progress: { run: "x" } }),
    ).toBe(true);
    expect(await s.store.getOutbound("a1")).toMatchObject({ state: "running", owner: "r2", leaseUntil: s.now + 5_000 });
    expect(await s.store.claimOutbound("r3", ["tg"], s.now + 5_000, 1_000, 10)).toEqual([]);
    const rescued = await s.store.claimOutbound("r3", ["tg"], s.now + 5_001, 1_000, 10);
    expect(rescued).toMatchObject([{ id: "a1", state: "running", owner: "r3", progress: { run: "x" } }]);
  });

  it("claims oldest first, at most the limit, and only the tenant's own entries", async () => {
    for (let i = 0; i < 5; i++) {
      await s.store.enqueueOutbound(outboxEntry(`e${i}`, `k${i}`));
      await s.store.forTenant("other").enqueueOutbound(outboxEntry(`x${i}`, `k${i}`));
    }
    expect(ids(await s.store.claimOutbound("r1", ["tg"], s.now, 1_000, 3))).toEqual(["e0", "e1", "e2"]);
    expect(ids(await s.store.claimOutbound("r1", ["tg"], s.now, 1_000, 3))).toEqual(["e3", "e4"]);
    expect(ids(await s.store.forTenant("other").claimOutbound("r1", ["tg"], s.now, 1_000, 10))).toEqual([
      "x0",
      "x1",
      "x2",
      "x3",
      "x4",
    ]);
    // Another tenant's view cannot change them.
    expect(await s.store.forTenant("third").updateOutbound("e0", "r1", { state: "sent" })).toBe(false);
  });
}

/** Changes by the holder only, listing and pruning. */
function changesPart(s: Subject): void {
  it("changes an entry only for its holder; null clears a field, undefined keeps it", async () => {
    await s.store.enqueueOutbound(outboxEntry("a1", "~user:42"));
    expect(await s.store.updateOutbound("a1", "r1", { state: "sent" })).toBe(false);
    await s.store.claimOutbound("r1", ["tg"], s.now, 1_000, 1);
    s.now += 7;
    expect(await s.store.updateOutbound("a1", "r1", { progress: { parts: 1 }, error: "slow", key: "tg:w:42" })).toBe(true);
    expect(await s.store.updateOutbound("a1", "r2", { progress: null })).toBe(false);
    expect(await s.store.getOutbound("a1")).toMatchObject({
      progress: { parts: 1 },
      error: "slow",
      key: "tg:w:42",
      updatedAt: s.now,
    });
    expect(await s.store.updateOutbound("a1", "r1", { progress: null, error: null, leaseUntil: s.now + 9 })).toBe(true);
    const entry = await s.store.getOutbound("a1");
    expect(entry).toMatchObject({ state: "sending", owner: "r1", leaseUntil: s.now + 9, key: "tg:w:42" });
    expect(entry?.progress).toBeUndefined();
    expect(entry?.error).toBeUndefined();
    // Released: a later lease is ignored, and the holder holds it no more.
    expect(await s.store.updateOutbound("a1", "r1", { state: "sent", leaseUntil: s.now + 99 })).toBe(true);
    expect((await s.store.getOutbound("a1"))?.leaseUntil).toBeUndefined();
    expect(await s.store.updateOutbound("a1", "r1", { result: { late: true } })).toBe(false);
    expect(await s.store.updateOutbound("missing", "r1", { state: "sent" })).toBe(false);
  });

  it("lists entries newest first with filters, and prunes finished ones by their last update", async () => {
    await s.store.enqueueOutbound(outboxEntry("a1", "A"));
    await s.store.enqueueOutbound(outboxEntry("b1", "B", "slack", { source: "schedule:s1" }));
    await s.store.enqueueOutbound(outboxEntry("c1", "C"));
    await s.store.enqueueOutbound(outboxEntry("d1", "D"));
    expect(ids(await s.store.listOutbound())).toEqual(["d1", "c1", "b1", "a1"]);
    expect(ids(await s.store.listOutbound({ limit: 2 }))).toEqual(["d1", "c1"]);
    expect(ids(await s.store.listOutbound({ channel: "slack" }))).toEqual(["b1"]);
    expect(ids(await s.store.listOutbound({ source: "schedule:s1" }))).toEqual(["b1"]);
    await s.store.claimOutbound("r1", ["tg", "slack"], s.now, 1_000, 10);
    await s.store.updateOutbound("a1", "r1", { state: "sent" });
    s.now += 10;
    await s.store.updateOutbound("b1", "r1", { state: "failed" });
    await s.store.updateOutbound("c1", "r1", { state: "queued" });
    expect(ids(await s.store.listOutbound({ state: "queued" }))).toEqual(["c1"]);
    expect(await s.store.forTenant("other").pruneOutbox(s.now + 1)).toBe(0);
    // a1 (sent) is older than the cut-off; b1 (failed) is not yet; c1 and d1 are unfinished.
    expect(await s.store.pruneOutbox(s.now)).toBe(1);
    expect(ids(await s.store.listOutbound())).toEqual(["d1", "c1", "b1"]);
    expect(await s.store.pruneOutbox(s.now + 1)).toBe(1);
    expect(ids(await s.store.listOutbound())).toEqual(["d1", "c1"]);
  });

  it("gives each entry to one of several claimers at once, in each conversation's order", async () => {
    await claimRace(s.now, [s.store, s.store, s.store]);
  });
}

/**
 * `workers` claim and complete 50 entries of 5 conversations in parallel loops (the stores may
 * be one store, or stores of several replicas on the same storage): each entry is handed out
 * once, and each conversation's entries in the order they were enqueued.
 */
export async function claimRace(now: number, workers: BindingStore[]): Promise<void> {
  const [first] = workers;
  if (!first) throw new Error("claimRace needs a store");
  const conversations = ["k0", "k1", "k2", "k3", "k4"];
  const expected = new Map(conversations.map((k) => [k, [] as string[]]));
  for (let i = 0; i < 50; i++) {
    const key = conversations[(i * 7) % 5] as string;
    await first.enqueueOutbound(outboxEntry(`e${i}`, key));
    expected.get(key)?.push(`e${i}`);
  }
  const handedOut: OutboxEntry[] = [];
  let sent = 0;
  await Promise.all(
    workers.map(async (store, w) => {
      for (let round = 0; sent < 50 && round < 2_000; round++) {
        const claimed = await store.claimOutbound(`w${w}`, ["tg"], now, 60_000, 3);
        handedOut.push(...claimed);
        for (const entry of claimed) {
          expect(await store.updateOutbound(entry.id, `w${w}`, { state: "sent", attempts: 1 })).toBe(true);
          sent++;
        }
        if (claimed.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      }
    }),
  );
  expect(handedOut.map((e) => e.id).sort()).toEqual(Array.from({ length: 50 }, (_, i) => `e${i}`).sort());
  for (const key of conversations) {
    expect(handedOut.filter((e) => e.key === key).map((e) => e.id)).toEqual(expected.get(key));
  }
  expect(await first.listOutbound({ state: "sent" })).toHaveLength(50);
}
