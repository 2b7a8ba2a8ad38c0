/**
 * The behaviour every BindingStore must have. SQLite runs it now; a Postgres store runs the
 * same suite by passing its own factory.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BindingStore, PendingQuestion } from "../../src/bindings/types.js";

export interface StoreFactory {
  /** A fresh, empty store. `clock` lets tests move time. */
  open(clock: () => number): Promise<BindingStore>;
  /** Reopens the same underlying storage after `close()` (a restart). */
  reopen?(clock: () => number): Promise<BindingStore>;
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
        await store.close();
        store = await reopen(clock);
        expect(await store.currentThread("k")).toBe("t1");
        expect((await store.findPendingByQuestionId("q1"))?.question).toBe("Which one?");
        expect((await store.findPendingByQuestionId("q1"))?.askedBy).toEqual({ id: "u1", name: "Alice" });
        expect((await store.unfinished()).map((e) => e.eventId)).toEqual(["1"]);
        expect(await store.recordInbound({ channel: "tg", eventId: "1", key: "k", payload: {} })).toBe(false);
      });
    }
  });
}
