/**
 * The binding-store contract's replica methods (`claimInbound`, `nextReceived`, `takeOver`):
 * several stores of different replicas on one storage, as gateway replicas sharing a database
 * open them; and the outbox's claims and the schedules' fires between such replicas. See binding-store.ts for the suite as a whole.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BindingStore, InboxEntry } from "../../bindings/types.js";
import { claimRace } from "./outbox.js";
import { fireRace } from "./schedules.js";

/** The replicas' stores opened by one test, and the clock they read. */
interface Replicas {
  now: number;
  /** A store working for the replica `name`, on the storage the test opened; closed after the test. */
  replica(name: string): Promise<BindingStore>;
}

const START = 1_000_000;

const event = (eventId: string, key = "k", channel = "tg") => ({ channel, eventId, key, payload: { eventId } });

export function replicaContract(
  label: string,
  open: (clock: () => number) => Promise<BindingStore>,
  openReplica: (replica: string, clock: () => number) => Promise<BindingStore>,
): void {
  describe(`BindingStore replica methods: ${label}`, () => {
    let opened: BindingStore[] = [];
    const r: Replicas = {
      now: START,
      async replica(name) {
        const store = await openReplica(name, clock);
        opened.push(store);
        return store;
      },
    };
    const clock = () => r.now;

    beforeEach(async () => {
      r.now = START;
      opened = [await open(clock)];
    });
    afterEach(async () => {
      for (const store of opened.reverse()) await store.close();
      opened = [];
    });
    claimsPart(r);
    takeOverPart(r);
    sendingPart(r);
  });
}

/** Owners, claims, and the order a conversation's waiting events come in. */
function claimsPart(r: Replicas): void {
  it("records the replica that recorded an event as its owner", async () => {
    const a = await r.replica("replica-a");
    expect(a.replica).toBe("replica-a");
    await a.recordInbound(event("1"));
    expect(await a.getInbound("tg", "1")).toMatchObject({ state: "received", owner: "replica-a" });
    expect(await a.forTenant("other").getInbound("tg", "1")).toBeUndefined();
  });

  it("lets exactly one of two replicas claim each event", async () => {
    const a = await r.replica("replica-a");
    const b = await r.replica("replica-b");
    const ids = Array.from({ length: 40 }, (_, i) => `e${i}`);
    for (const id of ids) await a.recordInbound(event(id, `k${id}`));
    // A repeated delivery to the other replica is the same event, not a second one.
    expect(await b.recordInbound(event("e0", "ke0"))).toBe(false);
    const results = await Promise.all(ids.flatMap((id) => [a.claimInbound!("tg", id), b.claimInbound!("tg", id)]));
    for (let i = 0; i < ids.length; i++) expect([results[2 * i], results[2 * i + 1]].filter(Boolean)).toHaveLength(1);
    const owners = await Promise.all(ids.map((id) => a.getInbound("tg", id)));
    ids.forEach((_, i) => {
      const winner = results[2 * i] ? "replica-a" : "replica-b";
      expect(owners[i]).toMatchObject({ state: "running", owner: winner });
    });
    // Neither claims it again, nor once it is done.
    await a.setInboxState("tg", "e0", "done");
    expect(await a.claimInbound!("tg", "e0")).toBe(false);
    expect(await b.claimInbound!("tg", "e1")).toBe(false);
    expect(await b.claimInbound!("tg", "missing")).toBe(false);
  });

  it("gives a conversation's oldest waiting event in the order the events were recorded, with the running ones before it", async () => {
    const a = await r.replica("replica-a");
    const b = await r.replica("replica-b");
    const next = async (store: BindingStore, key = "k") => {
      const found = await store.nextReceived!(key);
      return found && { next: found.next.eventId, before: found.before.map((e) => `${e.eventId}@${e.owner}`) };
    };
    // The same millisecond for all, from two replicas: only the recording order tells them apart.
    await a.recordInbound(event("3"));
    await b.recordInbound(event("1"));
    await a.recordInbound(event("2"));
    await b.recordInbound(event("x", "other"));
    await b.recordInbound(event("4"));
    expect(await next(b)).toEqual({ next: "3", before: [] });
    expect(await a.claimInbound!("tg", "3")).toBe(true);
    expect(await next(b)).toEqual({ next: "1", before: ["3@replica-a"] });
    await b.setInboxState("tg", "1", "done");
    // A running event recorded after the next waiting one does not come before it.
    expect(await b.claimInbound!("tg", "4")).toBe(true);
    expect(await next(a)).toEqual({ next: "2", before: ["3@replica-a"] });
    await a.setInboxState("tg", "3", "failed", "interrupted by a restart");
    expect(await next(a)).toEqual({ next: "2", before: [] });
    expect(await next(a, "other")).toEqual({ next: "x", before: [] });
    expect(await a.nextReceived!("nobody")).toBeUndefined();
    expect(await a.forTenant("other").nextReceived!("k")).toBeUndefined();
    // Nothing waiting: running events alone give nothing to start.
    await a.setInboxState("tg", "2", "done");
    expect(await a.nextReceived!("k")).toBeUndefined();
  });
}

/** Taking over the unfinished events of a replica that is gone. */
function takeOverPart(r: Replicas): void {
  it("splits a dead replica's unfinished events between two replicas taking over at once", async () => {
    const dead = await r.replica("replica-dead");
    const b = await r.replica("replica-b");
    const c = await r.replica("replica-c");
    const expected: string[] = [];
    for (let i = 0; i < 60; i++) {
      const channel = ["tg", "slack", "discord"][i % 3]!;
      await dead.recordInbound(event(`e${i}`, `k${i % 7}`, channel));
      r.now += 1;
      if (i % 5 === 0) await dead.setInboxState(channel, `e${i}`, "done");
      else if (i % 5 === 1) await dead.claimInbound!(channel, `e${i}`);
      if (channel !== "discord" && i % 5 !== 0) expected.push(`${channel}/e${i}`);
    }
    // A live replica's own events stay with it.
    await b.recordInbound(event("mine", "k0", "tg"));
    const [byB, byC] = await Promise.all([
      b.takeOver!(["replica-dead"], ["tg", "slack"]),
      c.takeOver!(["replica-dead"], ["tg", "slack"]),
    ]);
    const ids = (entries: InboxEntry[]) => entries.map((e) => `${e.channel}/${e.eventId}`);
    expect([...ids(byB), ...ids(byC)].sort()).toEqual([...expected].sort());
    expect(ids(byB).filter((id) => ids(byC).includes(id))).toEqual([]);
    // Oldest first, states unchanged, the new owner recorded.
    for (const [moved, owner] of [
      [byB, "replica-b"],
      [byC, "replica-c"],
    ] as const) {
      const received = moved.map((e) => e.receivedAt);
      expect(received).toEqual([...received].sort((x, y) => x - y));
      for (const entry of moved) {
        expect(entry.owner).toBe(owner);
        expect(entry.state).toBe(Number(entry.eventId.slice(1)) % 5 === 1 ? "running" : "received");
        expect(await b.getInbound(entry.channel, entry.eventId)).toMatchObject({ owner, state: entry.state });
      }
    }
    expect(await b.getInbound("discord", "e2")).toMatchObject({ owner: "replica-dead" });
    expect(await b.getInbound("tg", "mine")).toMatchObject({ owner: "replica-b" });
    // Nothing is left to take.
    expect(await c.takeOver!(["replica-dead"], ["tg", "slack"])).toEqual([]);
  });

  it("takes over only its own tenant's events", async () => {
    const dead = await r.replica("replica-dead");
    const b = await r.replica("replica-b");
    await dead.forTenant("a").recordInbound(event("1"));
    await dead.forTenant("b").recordInbound(event("1"));
    const moved = await b.forTenant("a").takeOver!(["replica-dead"], ["tg"]);
    expect(moved.map((e) => e.eventId)).toEqual(["1"]);
    expect(await b.forTenant("b").getInbound("tg", "1")).toMatchObject({ owner: "replica-dead" });
  });
}

/** The outbox and the schedules between replicas: claims and fires that race on one storage. */
function sendingPart(r: Replicas): void {
  it("gives each outbox entry to one of three replicas claiming at once, in each conversation's order", async () => {
    const stores = [await r.replica("replica-a"), await r.replica("replica-b"), await r.replica("replica-c")];
    await claimRace(r.now, stores);
  });

  it("records one fire of a due time when three replicas fire it at once", async () => {
    const stores = [await r.replica("replica-a"), await r.replica("replica-b"), await r.replica("replica-c")];
    await fireRace(r.now, [...stores, ...stores]);
  });
}
