/**
 * The binding-store contract suite: the behaviour every `BindingStore` must have, whatever keeps
 * its rows. Each storage kind's test file calls `bindingStoreContract(label, open, options)`; it is
 * published as `antler/testing`, so a store of your own runs the same checks. It needs vitest.
 *
 * The suite has parts along the store's concerns (bindings, pending questions, the inbox, the
 * outbox, the schedules and the conversations' settings: outbox.ts, schedules.ts,
 * conversation-settings.ts), the tenants they are kept apart by, a restart, and the replica methods. `skip` leaves a part out,
 * and must say why; `restart` needs `reopen` and `replicas` needs `openReplica` unless skipped.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type BindingStore, DEFAULT_TENANT, type PendingQuestion } from "../../bindings/types.js";
import { replicaContract } from "./binding-store-replicas.js";
import { settingsPart } from "./conversation-settings.js";
import { outboxEntry, outboxPart } from "./outbox.js";
import { scheduleOf, schedulesPart } from "./schedules.js";

export const BINDING_STORE_PARTS = [
  "bindings",
  "questions",
  "inbox",
  "outbox",
  "schedules",
  "settings",
  "tenants",
  "restart",
  "replicas",
] as const;
export type BindingStorePart = (typeof BINDING_STORE_PARTS)[number];

/** A part left out, and why (the reason shows in the test report). */
export interface BindingStoreSkip {
  part: BindingStorePart;
  reason: string;
}

/** Opens a store on storage; `clock` is the store's clock (ms), which the tests move. */
export type OpenBindingStore = (clock: () => number) => Promise<BindingStore>;

export interface BindingStoreContractOptions {
  /** Reopens the storage the last `open` made, after `close()` (a restart); the `restart` part needs it. */
  reopen?: OpenBindingStore;
  /**
   * Another store on the storage the last `open` made, working for `replica`: what a second
   * gateway replica opens (the suite closes it). The `replicas` part needs it.
   */
  openReplica?: (replica: string, clock: () => number) => Promise<BindingStore>;
  /** Parts to leave out; each needs a reason. */
  skip?: BindingStoreSkip[];
}

/** The clock's time at the start of each test (ms). */
const START = 1_000_000;

/** The store under test and the clock it reads, shared by one part's tests. */
class StoreUnderTest {
  now = START;
  readonly clock = () => this.now;
  private opened: BindingStore | undefined;

  get store(): BindingStore {
    if (!this.opened) throw new Error("the binding-store contract's store is not open");
    return this.opened;
  }

  set store(store: BindingStore) {
    this.opened = store;
  }
}

export function bindingStoreContract(label: string, open: OpenBindingStore, options: BindingStoreContractOptions = {}): void {
  const skipped = (part: BindingStorePart) => options.skip?.find((s) => s.part === part);
  for (const s of options.skip ?? []) {
    if (!s.reason?.trim()) throw new Error(`bindingStoreContract(${label}): skipping "${s.part}" needs a reason`);
  }
  for (const [part, given] of [
    ["restart", options.reopen],
    ["replicas", options.openReplica],
  ] as const) {
    if (!given && !skipped(part)) {
      throw new Error(
        `bindingStoreContract(${label}): "${part}" needs options.${part === "restart" ? "reopen" : "openReplica"}, or a skip with a reason`,
      );
    }
  }
  describe(`BindingStore contract: ${label}`, () => {
    const s = new StoreUnderTest();
    beforeEach(async () => {
      s.now = START;
      s.store = await open(s.clock);
    });
    afterEach(async () => {
      await s.store.close();
    });
    const parts: Record<Exclude<BindingStorePart, "replicas">, () => void> = {
      bindings: () => bindingsPart(s),
      questions: () => questionsPart(s),
      inbox: () => inboxPart(s),
      outbox: () => outboxPart(s),
      schedules: () => schedulesPart(s),
      settings: () => settingsPart(s),
      tenants: () => tenantsPart(s),
      restart: () => {
        if (options.reopen) restartPart(s, options.reopen);
      },
    };
    for (const [part, register] of Object.entries(parts)) {
      const skip = skipped(part as BindingStorePart);
      if (skip) describe.skip(`${part} (skipped: ${skip.reason})`, register);
      else register();
    }
  });
  const noReplicas = skipped("replicas");
  if (noReplicas || !options.openReplica) {
    describe.skip(`BindingStore replica methods: ${label} (skipped: ${noReplicas?.reason})`, () => {
      it("claims, orders and takes over events between replicas", () => undefined);
    });
  } else replicaContract(label, open, options.openReplica);
}

/** A pending question asked at `now`. */
function questionAt(now: number, threadId: string, questionId: string): PendingQuestion {
  return {
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
  };
}

/** Bindings: conversation → thread, the agent of each, and the agent a user picked. */
function bindingsPart(s: StoreUnderTest): void {
  it("binds a conversation to a thread and keeps earlier threads on /new", async () => {
    expect(await s.store.currentThread("k")).toBeUndefined();
    await s.store.bindThread("k", "t1");
    expect(await s.store.currentThread("k")).toBe("t1");
    s.now += 10;
    await s.store.bindThread("k", "t2");
    expect(await s.store.currentThread("k")).toBe("t2");
    const history = await s.store.threadHistory("k");
    expect(history.map((h) => [h.threadId, h.current])).toEqual([
      ["t2", true],
      ["t1", false],
    ]);
    expect(await s.store.currentThread("other")).toBeUndefined();
  });

  it("records the agent of each binding, and keeps it when a thread is bound again without one", async () => {
    expect(await s.store.currentBinding("k")).toBeUndefined();
    await s.store.bindThread("k", "t1", "support");
    expect(await s.store.currentBinding("k")).toEqual({
      key: "k",
      threadId: "t1",
      agent: "support",
      createdAt: s.now,
      current: true,
    });
    s.now += 10;
    await s.store.bindThread("k", "t2");
    expect(await s.store.currentBinding("k")).toEqual({ key: "k", threadId: "t2", createdAt: s.now, current: true });
    expect((await s.store.threadHistory("k")).map((h) => [h.threadId, h.agent])).toEqual([
      ["t2", undefined],
      ["t1", "support"],
    ]);
    await s.store.bindThread("k", "t1");
    expect(await s.store.currentBinding("k")).toMatchObject({ threadId: "t1", agent: "support", current: true });
    await s.store.bindThread("k", "t2", "research");
    expect((await s.store.currentBinding("k"))?.agent).toBe("research");
  });

  it("remembers the agent picked for a conversation across /new until it is cleared", async () => {
    expect(await s.store.chosenAgent("k")).toBeUndefined();
    await s.store.setChosenAgent("k", "research");
    await s.store.bindThread("k", "t1", "research");
    await s.store.bindThread("k", "t2", "research");
    expect(await s.store.chosenAgent("k")).toBe("research");
    expect(await s.store.chosenAgent("other")).toBeUndefined();
    await s.store.setChosenAgent("k", "support");
    expect(await s.store.chosenAgent("k")).toBe("support");
    await s.store.setChosenAgent("k", undefined);
    expect(await s.store.chosenAgent("k")).toBeUndefined();
  });
}

/** Pending questions: one per thread, found by its buttons' id; tool approvals with their state. */
function questionsPart(s: StoreUnderTest): void {
  const question = (threadId: string, questionId: string) => questionAt(s.now, threadId, questionId);

  it("stores, finds and clears pending questions", async () => {
    await s.store.setPending(question("t1", "q1"));
    expect(await s.store.getPending("t1")).toEqual(question("t1", "q1"));
    expect((await s.store.findPendingByQuestionId("q1"))?.threadId).toBe("t1");
    await s.store.setPending({ ...question("t1", "q2"), options: [] });
    expect(await s.store.findPendingByQuestionId("q1")).toBeUndefined();
    expect((await s.store.getPending("t1"))?.options).toEqual([]);
    await s.store.clearPending("t1");
    expect(await s.store.getPending("t1")).toBeUndefined();
  });

  it("keeps who asked a pending question, and stores a question without an asker", async () => {
    await s.store.setPending(question("t1", "q1"));
    expect((await s.store.findPendingByQuestionId("q1"))?.askedBy).toEqual({ id: "u1", name: "Alice" });
    await s.store.setPending({ ...question("t1", "q2"), askedBy: { id: "u2" } });
    expect((await s.store.getPending("t1"))?.askedBy).toEqual({ id: "u2" });
    const { askedBy: _, ...anonymous } = question("t2", "q3");
    await s.store.setPending(anonymous);
    expect(await s.store.getPending("t2")).toEqual(anonymous);
  });

  it("keeps a tool approval's state with its question, and lists each tenant's open approvals", async () => {
    const approval = { requests: [{ name: "send_email" }], decisions: [null], deadline: 5 };
    await s.store.setPending({ ...question("t1", "q1"), approval });
    await s.store.setPending(question("t2", "q2"));
    await s.store.forTenant("other").setPending({ ...question("t3", "q3"), approval });
    expect((await s.store.getPending("t1"))?.approval).toEqual(approval);
    expect((await s.store.getPending("t2"))?.approval).toBeUndefined();
    expect((await s.store.pendingApprovals()).map((p) => p.threadId)).toEqual(["t1"]);
    await s.store.setPending({ ...question("t1", "q1"), approval: { ...approval, decisions: [{ type: "approve" }] } });
    expect((await s.store.getPending("t1"))?.approval).toMatchObject({ decisions: [{ type: "approve" }] });
    await s.store.clearPending("t1");
    expect(await s.store.pendingApprovals()).toEqual([]);
    expect((await s.store.forTenant("other").pendingApprovals()).map((p) => p.threadId)).toEqual(["t3"]);
  });
}

/** The inbox: dedupe, what is unfinished, pruning. */
function inboxPart(s: StoreUnderTest): void {
  it("dedupes inbound events by channel and event id", async () => {
    const entry = { channel: "tg", eventId: "42", key: "tg:w:1", payload: { text: "hi" } };
    expect(await s.store.recordInbound(entry)).toBe(true);
    expect(await s.store.recordInbound(entry)).toBe(false);
    expect(await s.store.recordInbound({ ...entry, channel: "slack" })).toBe(true);
    expect((await s.store.getInbound("tg", "42"))?.payload).toEqual({ text: "hi" });
  });

  it("lists unfinished events in arrival order and prunes finished ones", async () => {
    for (const id of ["a", "b", "c"]) {
      await s.store.recordInbound({ channel: "tg", eventId: id, key: "k", payload: { id } });
      s.now += 1;
    }
    await s.store.setInboxState("tg", "a", "done");
    await s.store.setInboxState("tg", "b", "running");
    await s.store.setInboxState("tg", "c", "failed", "boom");
    expect((await s.store.unfinished()).map((e) => [e.eventId, e.state])).toEqual([["b", "running"]]);
    expect((await s.store.getInbound("tg", "c"))?.error).toBe("boom");
    // "a" (done) and "b" (running) are older than the cut-off; only the finished one goes.
    expect(await s.store.pruneInbox(1_000_002)).toBe(1);
    expect(await s.store.getInbound("tg", "a")).toBeUndefined();
    expect(await s.store.recordInbound({ channel: "tg", eventId: "b", key: "k", payload: {} })).toBe(false);
    expect(await s.store.recordInbound({ channel: "tg", eventId: "c", key: "k", payload: {} })).toBe(false);
  });

  it("gives a conversation's most recently recorded event, whatever its state", async () => {
    expect(await s.store.lastInbound("k")).toBeUndefined();
    await s.store.recordInbound({ channel: "tg", eventId: "1", key: "k", payload: { ref: "old" } });
    await s.store.recordInbound({ channel: "tg", eventId: "2", key: "other", payload: { ref: "other" } });
    expect((await s.store.lastInbound("k"))?.payload).toEqual({ ref: "old" });
    // The same millisecond: the recording order tells them apart.
    await s.store.recordInbound({ channel: "tg", eventId: "3", key: "k", payload: { ref: "new" } });
    await s.store.setInboxState("tg", "3", "failed", "boom");
    expect(await s.store.lastInbound("k")).toMatchObject({ eventId: "3", state: "failed", payload: { ref: "new" } });
    s.now += 1;
    await s.store.recordInbound({ channel: "slack", eventId: "4", key: "k", payload: { ref: "newest" } });
    expect((await s.store.lastInbound("k"))?.eventId).toBe("4");
    expect(await s.store.forTenant("other").lastInbound("k")).toBeUndefined();
  });
}

/** Tenants: the store is the default tenant's, and its views keep every concern apart. */
function tenantsPart(s: StoreUnderTest): void {
  const question = (threadId: string, questionId: string) => questionAt(s.now, threadId, questionId);

  it("is the default tenant's store, and its views name their tenant", async () => {
    expect(DEFAULT_TENANT).toBe("default");
    expect(s.store.tenant).toBe(DEFAULT_TENANT);
    expect(s.store.forTenant("acme").tenant).toBe("acme");
    await s.store.bindThread("k", "t1");
    expect(await s.store.forTenant(DEFAULT_TENANT).currentThread("k")).toBe("t1");
    expect(await s.store.forTenant("acme").currentThread("k")).toBeUndefined();
  });

  it("keeps each tenant's bindings and picked agents apart under the same keys", async () => {
    const a = s.store.forTenant("a");
    const b = s.store.forTenant("b");
    await a.bindThread("k", "t1", "support");
    await a.setChosenAgent("k", "support");
    expect(await b.currentThread("k")).toBeUndefined();
    expect(await b.currentBinding("k")).toBeUndefined();
    expect(await b.threadHistory("k")).toEqual([]);
    expect(await b.chosenAgent("k")).toBeUndefined();
    expect(await s.store.currentThread("k")).toBeUndefined();
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
    const a = s.store.forTenant("a");
    const b = s.store.forTenant("b");
    await a.setPending(question("t1", "q1"));
    expect(await b.findPendingByQuestionId("q1")).toBeUndefined();
    expect(await b.getPending("t1")).toBeUndefined();
    expect(await s.store.findPendingByQuestionId("q1")).toBeUndefined();
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
    const a = s.store.forTenant("a");
    const b = s.store.forTenant("b");
    const entry = { channel: "tg", eventId: "42", key: "tg:w:1", payload: { from: "a" } };
    expect(await a.recordInbound(entry)).toBe(true);
    expect(await b.getInbound("tg", "42")).toBeUndefined();
    expect(await b.unfinished()).toEqual([]);
    await b.setInboxState("tg", "42", "done");
    expect(await b.pruneInbox(s.now + 1)).toBe(0);
    expect((await a.getInbound("tg", "42"))?.state).toBe("received");
    expect(await b.recordInbound({ ...entry, payload: { from: "b" } })).toBe(true);
    await b.setInboxState("tg", "42", "done");
    expect((await a.unfinished()).map((e) => e.payload)).toEqual([{ from: "a" }]);
    expect(await b.pruneInbox(s.now + 1)).toBe(1);
    expect((await a.getInbound("tg", "42"))?.payload).toEqual({ from: "a" });
    expect(await a.recordInbound(entry)).toBe(false);
    expect(await s.store.getInbound("tg", "42")).toBeUndefined();
  });

  it("closes nothing when a view is closed", async () => {
    await s.store.forTenant("a").close();
    await s.store.bindThread("k", "t1");
    expect(await s.store.currentThread("k")).toBe("t1");
  });
}

/** A restart: everything is there again on the same storage. */
function restartPart(s: StoreUnderTest, reopen: OpenBindingStore): void {
  const question = (threadId: string, questionId: string) => questionAt(s.now, threadId, questionId);

  it("keeps everything across a restart", async () => {
    await s.store.bindThread("k", "t1");
    await s.store.setPending(question("t1", "q1"));
    await s.store.recordInbound({ channel: "tg", eventId: "1", key: "k", payload: {} });
    await s.store.setInboxState("tg", "1", "running");
    await s.store.setChosenAgent("k", "research");
    await s.store.setConversationSetting("k", "queue", "steer");
    await s.store.forTenant("a").bindThread("k", "t-a", "support");
    await s.store.forTenant("a").setConversationSetting("k", "queue", "collect");
    await s.store.enqueueOutbound(outboxEntry("o1"));
    await s.store.claimOutbound("r1", ["tg"], s.now, 1_000, 1);
    await s.store.putSchedule(scheduleOf("s1", s.now + 60));
    await s.store.close();
    s.store = await reopen(s.clock);
    expect(await s.store.chosenAgent("k")).toBe("research");
    expect(await s.store.conversationSetting("k", "queue")).toBe("steer");
    expect(await s.store.forTenant("a").conversationSetting("k", "queue")).toBe("collect");
    expect(await s.store.forTenant("a").currentBinding("k")).toMatchObject({ threadId: "t-a", agent: "support" });
    expect(await s.store.currentThread("k")).toBe("t1");
    expect((await s.store.findPendingByQuestionId("q1"))?.question).toBe("Which one?");
    expect((await s.store.findPendingByQuestionId("q1"))?.askedBy).toEqual({ id: "u1", name: "Alice" });
    expect((await s.store.unfinished()).map((e) => e.eventId)).toEqual(["1"]);
    expect(await s.store.recordInbound({ channel: "tg", eventId: "1", key: "k", payload: {} })).toBe(false);
    expect(await s.store.getOutbound("o1")).toMatchObject({ state: "sending", owner: "r1", payload: outboxEntry("o1").payload });
    expect((await s.store.enqueueOutbound(outboxEntry("o1"))).created).toBe(false);
    expect(await s.store.getSchedule("s1")).toMatchObject({ nextFireAt: s.now + 60, action: scheduleOf("s1", 0).action });
  });
}
