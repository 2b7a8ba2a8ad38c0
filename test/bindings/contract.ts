/**
 * The behaviour every BindingStore must have. SQLite and PostgreSQL run it, each with its own
 * factory. The replica methods are checked only on stores that have them; a factory without
 * them says why, and their tests are reported as skipped under that reason.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type BindingStore, DEFAULT_TENANT, type InboxEntry, type PendingQuestion } from "../../src/bindings/types.js";

export interface StoreFactory {
  /** A fresh, empty store. `clock` lets tests move time. */
  open(clock: () => number): Promise<BindingStore>;
  /** Reopens the same underlying storage after `close()` (a restart). */
  reopen?(clock: () => number): Promise<BindingStore>;
  /**
   * Another store on the storage the last `open` made, working for `replica`: what a second
   * gateway replica opens. The caller closes it.
   */
  openReplica?(replica: string, clock: () => number): Promise<BindingStore>;
  /** Why the store has no replica methods, when it has none. */
  noReplicas?: string;
}

export function bindingStoreContract(label: string, factory: StoreFactory): void {
  describe(`BindingStore contract: ${label}`, () => {
    let now = 1_000_000;
    const clock = () => now;
    let store: BindingStore;

    beforeEach(async () => {
      now = 1_000_000;
      store = await factory.open(clock);
    });
    afterEach(async () => {
      await store.close();
    });

    const question = (threadId: string, questionId: string): PendingQuestion => ({
      threadId,
      key: "tg:w:1",
      questionId,
      interruptId: `int-${questionId}`,
      question: "Which one?",
      options: ["red", "blue"],
      kind: "ambiguous",
      posted: { id: "m1", ref: { chatId: "1" } },
      askedBy: { id: "u1", name: "Alice" },
      createdAt: now,
    });

    it("binds a conversation to a thread and keeps earlier threads on /new", async () => {
      expect(await store.currentThread("k")).toBeUndefined();
      await store.bindThread("k", "t1");
      expect(await store.currentThread("k")).toBe("t1");
      now += 10;
      await store.bindThread("k", "t2");
      expect(await store.currentThread("k")).toBe("t2");
      const history = await store.threadHistory("k");
      expect(history.map((h) => [h.threadId, h.current])).toEqual([
        ["t2", true],
        ["t1", false],
      ]);
      expect(await store.currentThread("other")).toBeUndefined();
    });

    it("records the agent of each binding, and keeps it when a thread is bound again without one", async () => {
      expect(await store.currentBinding("k")).toBeUndefined();
      await store.bindThread("k", "t1", "support");
      expect(await store.currentBinding("k")).toEqual({
        key: "k",
        threadId: "t1",
        agent: "support",
        createdAt: now,
        current: true,
      });
      now += 10;
      await store.bindThread("k", "t2");
      expect(await store.currentBinding("k")).toEqual({ key: "k", threadId: "t2", createdAt: now, current: true });
      expect((await store.threadHistory("k")).map((h) => [h.threadId, h.agent])).toEqual([
        ["t2", undefined],
        ["t1", "support"],
      ]);
      await store.bindThread("k", "t1");
      expect(await store.currentBinding("k")).toMatchObject({ threadId: "t1", agent: "support", current: true });
      await store.bindThread("k", "t2", "research");
      expect((await store.currentBinding("k"))?.agent).toBe("research");
    });

    it("remembers the agent picked for a conversation across /new until it is cleared", async () => {
      expect(await store.chosenAgent("k")).toBeUndefined();
      await store.setChosenAgent("k", "research");
      await store.bindThread("k", "t1", "research");
      await store.bindThread("k", "t2", "research");
      expect(await store.chosenAgent("k")).toBe("research");
      expect(await store.chosenAgent("other")).toBeUndefined();
      await store.setChosenAgent("k", "support");
      expect(await store.chosenAgent("k")).toBe("support");
      await store.setChosenAgent("k", undefined);
      expect(await store.chosenAgent("k")).toBeUndefined();
    });

    it("is the default tenant's store, and its views name their tenant", async () => {
      expect(DEFAULT_TENANT).toBe("default");
      expect(store.tenant).toBe(DEFAULT_TENANT);
      expect(store.forTenant("acme").tenant).toBe("acme");
      await store.bindThread("k", "t1");
      expect(await store.forTenant(DEFAULT_TENANT).currentThread("k")).toBe("t1");
      expect(await store.forTenant("acme").currentThread("k")).toBeUndefined();
    });

    it("keeps each tenant's bindings and picked agents apart under the same keys", async () => {
      const a = store.forTenant("a");
      const b = store.forTenant("b");
      await a.bindThread("k", "t1", "support");
      await a.setChosenAgent("k", "support");
      expect(await b.currentThread("k")).toBeUndefined();
      expect(await b.currentBinding("k")).toBeUndefined();
      expect(await b.threadHistory("k")).toEqual([]);
      expect(await b.chosenAgent("k")).toBeUndefined();
      expect(await store.currentThread("k")).toBeUndefined();
      // The same key and even the same thread id in b neither replace nor retire a's binding.
      await b.bindThread("k", "t1", "research");
      await b.bindThread("k", "t2");
      await b.setChosenAgent("k", undefined);
      expect(await a.currentBinding("k")).toMatchObject({ threadId: "t1", agent: "support", current: true });
      expect((await a.threadHistory("k")).map((h) => h.threadId)).toEqual(["t1"]);
      expect(await a.chosenAgent("k")).toBe("support");
      expect((await b.threadHistory("k")).map((h) => [h.threadId, h.agent, h.current])).toEqual([
        ["t2", undefined, true],
        ["t1", "research", false],
      ]);
    });

    it("keeps each tenant's pending questions apart, even under the same question id", async () => {
      const a = store.forTenant("a");
      const b = store.forTenant("b");
      await a.setPending(question("t1", "q1"));
      expect(await b.findPendingByQuestionId("q1")).toBeUndefined();
      expect(await b.getPending("t1")).toBeUndefined();
      expect(await store.findPendingByQuestionId("q1")).toBeUndefined();
      await b.clearPending("t1");
      expect(await a.getPending("t1")).toEqual(question("t1", "q1"));
      await b.setPending({ ...question("t1", "q1"), question: "B's own?" });
      expect((await a.findPendingByQuestionId("q1"))?.question).toBe("Which one?");
      expect((await b.findPendingByQuestionId("q1"))?.question).toBe("B's own?");
      await a.clearPending("t1");
      expect(await a.findPendingByQuestionId("q1")).toBeUndefined();
      expect((await b.getPending("t1"))?.question).toBe("B's own?");
    });

    it("keeps each tenant's inbox apart, even under the same channel and event id", async () => {
      const a = store.forTenant("a");
      const b = store.forTenant("b");
      const entry = { channel: "tg", eventId: "42", key: "tg:w:1", payload: { from: "a" } };
      expect(await a.recordInbound(entry)).toBe(true);
      expect(await b.getInbound("tg", "42")).toBeUndefined();
      expect(await b.unfinished()).toEqual([]);
      await b.setInboxState("tg", "42", "done");
      expect(await b.pruneInbox(now + 1)).toBe(0);
      expect((await a.getInbound("tg", "42"))?.state).toBe("received");
      expect(await b.recordInbound({ ...entry, payload: { from: "b" } })).toBe(true);
      await b.setInboxState("tg", "42", "done");
      expect((await a.unfinished()).map((e) => e.payload)).toEqual([{ from: "a" }]);
      expect(await b.pruneInbox(now + 1)).toBe(1);
      expect((await a.getInbound("tg", "42"))?.payload).toEqual({ from: "a" });
      expect(await a.recordInbound(entry)).toBe(false);
      expect(await store.getInbound("tg", "42")).toBeUndefined();
    });

    it("closes nothing when a view is closed", async () => {
      await store.forTenant("a").close();
      await store.bindThread("k", "t1");
      expect(await store.currentThread("k")).toBe("t1");
    });

    it("stores, finds and clears pending questions", async () => {
      await store.setPending(question("t1", "q1"));
      expect(await store.getPending("t1")).toEqual(question("t1", "q1"));
      expect((await store.findPendingByQuestionId("q1"))?.threadId).toBe("t1");
      await store.setPending({ ...question("t1", "q2"), options: [] });
      expect(await store.findPendingByQuestionId("q1")).toBeUndefined();
      expect((await store.getPending("t1"))?.options).toEqual([]);
      await store.clearPending("t1");
      expect(await store.getPending("t1")).toBeUndefined();
    });

    it("keeps who asked a pending question, and stores a question without an asker", async () => {
      await store.setPending(question("t1", "q1"));
      expect((await store.findPendingByQuestionId("q1"))?.askedBy).toEqual({ id: "u1", name: "Alice" });
      await store.setPending({ ...question("t1", "q2"), askedBy: { id: "u2" } });
      expect((await store.getPending("t1"))?.askedBy).toEqual({ id: "u2" });
      const { askedBy: _, ...anonymous } = question("t2", "q3");
      await store.setPending(anonymous);
      expect(await store.getPending("t2")).toEqual(anonymous);
    });

    it("keeps a tool approval's state with its question, and lists each tenant's open approvals", async () => {
      const approval = { requests: [{ name: "send_email" }], decisions: [null], deadline: 5 };
      await store.setPending({ ...question("t1", "q1"), approval });
      await store.setPending(question("t2", "q2"));
      await store.forTenant("other").setPending({ ...question("t3", "q3"), approval });
      expect((await store.getPending("t1"))?.approval).toEqual(approval);
      expect((await store.getPending("t2"))?.approval).toBeUndefined();
      expect((await store.pendingApprovals()).map((p) => p.threadId)).toEqual(["t1"]);
      await store.setPending({ ...question("t1", "q1"), approval: { ...approval, decisions: [{ type: "approve" }] } });
      expect((await store.getPending("t1"))?.approval).toMatchObject({ decisions: [{ type: "approve" }] });
      await store.clearPending("t1");
      expect(await store.pendingApprovals()).toEqual([]);
      expect((await store.forTenant("other").pendingApprovals()).map((p) => p.threadId)).toEqual(["t3"]);
    });

    it("dedupes inbound events by channel and event id", async () => {
      const entry = { channel: "tg", eventId: "42", key: "tg:w:1", payload: { text: "hi" } };
      expect(await store.recordInbound(entry)).toBe(true);
      expect(await store.recordInbound(entry)).toBe(false);
      expect(await store.recordInbound({ ...entry, channel: "slack" })).toBe(true);
      expect((await store.getInbound("tg", "42"))?.payload).toEqual({ text: "hi" });
    });

    it("lists unfinished events in arrival order and prunes finished ones", async () => {
      for (const id of ["a", "b", "c"]) {
        await store.recordInbound({ channel: "tg", eventId: id, key: "k", payload: { id } });
        now += 1;
      }
      await store.setInboxState("tg", "a", "done");
      await store.setInboxState("tg", "b", "running");
      await store.setInboxState("tg", "c", "failed", "boom");
      expect((await store.unfinished()).map((e) => [e.eventId, e.state])).toEqual([["b", "running"]]);
      expect((await store.getInbound("tg", "c"))?.error).toBe("boom");
      // "a" (done) and "b" (running) are older than the cut-off; only the finished one goes.
      expect(await store.pruneInbox(1_000_002)).toBe(1);
      expect(await store.getInbound("tg", "a")).toBeUndefined();
      expect(await store.recordInbound({ channel: "tg", eventId: "b", key: "k", payload: {} })).toBe(false);
      expect(await store.recordInbound({ channel: "tg", eventId: "c", key: "k", payload: {} })).toBe(false);
    });

    if (factory.reopen) {
      const reopen = factory.reopen;
      it("keeps everything across a restart", async () => {
        await store.bindThread("k", "t1");
        await store.setPending(question("t1", "q1"));
        await store.recordInbound({ channel: "tg", eventId: "1", key: "k", payload: {} });
        await store.setInboxState("tg", "1", "running");
        await store.setChosenAgent("k", "research");
        await store.forTenant("a").bindThread("k", "t-a", "support");
        await store.close();
        store = await reopen(clock);
        expect(await store.chosenAgent("k")).toBe("research");
        expect(await store.forTenant("a").currentBinding("k")).toMatchObject({ threadId: "t-a", agent: "support" });
        expect(await store.currentThread("k")).toBe("t1");
        expect((await store.findPendingByQuestionId("q1"))?.question).toBe("Which one?");
        expect((await store.findPendingByQuestionId("q1"))?.askedBy).toEqual({ id: "u1", name: "Alice" });
        expect((await store.unfinished()).map((e) => e.eventId)).toEqual(["1"]);
        expect(await store.recordInbound({ channel: "tg", eventId: "1", key: "k", payload: {} })).toBe(false);
      });
    }
  });
  replicaContract(label, factory);
}

/** The replica methods: several stores of different replicas on one storage. */
function replicaContract(label: string, factory: StoreFactory): void {
  const { openReplica } = factory;
  if (!openReplica) {
    describe.skip(`BindingStore replica methods: ${label} (skipped: ${factory.noReplicas ?? "no reason given"})`, () => {
      it("claims, orders and takes over events between replicas", () => undefined);
    });
    return;
  }

  describe(`BindingStore replica methods: ${label}`, () => {
    let now = 1_000_000;
    const clock = () => now;
    let opened: BindingStore[] = [];
    const replica = async (name: string) => {
      const store = await openReplica(name, clock);
      opened.push(store);
      return store;
    };

    beforeEach(async () => {
      now = 1_000_000;
      opened = [await factory.open(clock)];
    });
    afterEach(async () => {
      for (const store of opened.reverse()) await store.close();
      opened = [];
    });

    const event = (eventId: string, key = "k", channel = "tg") => ({ channel, eventId, key, payload: { eventId } });

    it("records the replica that recorded an event as its owner", async () => {
      const a = await replica("replica-a");
      expect(a.replica).toBe("replica-a");
      await a.recordInbound(event("1"));
      expect(await a.getInbound("tg", "1")).toMatchObject({ state: "received", owner: "replica-a" });
      expect(await a.forTenant("other").getInbound("tg", "1")).toBeUndefined();
    });

    it("lets exactly one of two replicas claim each event", async () => {
      const a = await replica("replica-a");
      const b = await replica("replica-b");
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
      const a = await replica("replica-a");
      const b = await replica("replica-b");
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

    it("splits a dead replica's unfinished events between two replicas taking over at once", async () => {
      const dead = await replica("replica-dead");
      const b = await replica("replica-b");
      const c = await replica("replica-c");
      const expected: string[] = [];
      for (let i = 0; i < 60; i++) {
        const channel = ["tg", "slack", "discord"][i % 3]!;
        await dead.recordInbound(event(`e${i}`, `k${i % 7}`, channel));
        now += 1;
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
      const dead = await replica("replica-dead");
      const b = await replica("replica-b");
      await dead.forTenant("a").recordInbound(event("1"));
      await dead.forTenant("b").recordInbound(event("1"));
      const moved = await b.forTenant("a").takeOver!(["replica-dead"], ["tg"]);
      expect(moved.map((e) => e.eventId)).toEqual(["1"]);
      expect(await b.forTenant("b").getInbound("tg", "1")).toMatchObject({ owner: "replica-dead" });
    });
  });
}
