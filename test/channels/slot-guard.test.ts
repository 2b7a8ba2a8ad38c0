/**
 * A run's hold on its run slot: a stream that waits past the stall threshold gives its slot up,
 * takes one back when it moves again if one is free, carries on without one otherwise, and
 * gives it up exactly once at the end. Driven by streams whose every event the test releases.
 */
import { describe, expect, it } from "vitest";
import { Semaphore } from "../../src/core/queue.js";
import { RunSlot } from "../../src/core/slot-guard.js";
import { eventually, sleep } from "../../src/testing/gateway.js";

type Event = { type: string; delta: string };

/** A stream whose next event comes only when the test calls `emit` (text, or `kind`); `end` finishes it. */
function gatedStream() {
  const queue: Array<(value: IteratorResult<Event>) => void> = [];
  const ready: IteratorResult<Event>[] = [];
  let returned = false;
  const iterable: AsyncIterable<Event> = {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        const value = ready.shift();
        if (value) return Promise.resolve(value);
        return new Promise<IteratorResult<Event>>((resolve) => queue.push(resolve));
      },
      return: async () => {
        returned = true;
        return { done: true, value: undefined };
      },
    }),
  };
  const push = (value: IteratorResult<Event>) => {
    const waiter = queue.shift();
    if (waiter) waiter(value);
    else ready.push(value);
  };
  return {
    iterable,
    emit: (text: string, kind = "text") => push({ done: false, value: { type: kind, delta: text } }),
    end: () => push({ done: true, value: undefined }),
    get returned() {
      return returned;
    },
  };
}

/** Reads `events` in the background, recording each one. */
function reader(events: AsyncIterable<Event>) {
  const seen: string[] = [];
  const done = (async () => {
    for await (const e of events) seen.push(e.delta);
  })();
  return { seen, done };
}

describe("RunSlot", () => {
  it("gives the slot to a waiting run once its stream stalls, and takes one back when it moves and one is free", async () => {
    const slots = new Semaphore(1);
    const stream = gatedStream();
    const run = new RunSlot(slots, await slots.acquire(), 50);
    const read = reader(run.guard(stream.iterable));
    stream.emit("a");
    await eventually(() => read.seen.length === 1, 5_000, "the first event");
    // The stream is silent now: a second run waiting for the only slot gets it.
    const second = await slots.acquire();
    expect(run.holding).toBe(false);
    expect(slots.inUse).toBe(1);
    // It moves again while the slot is taken: it carries on without one, and never waits.
    stream.emit("b");
    await eventually(() => read.seen.length === 2, 5_000, "the second event");
    expect(run.holding).toBe(false);
    expect(slots.inUse).toBe(1);
    // The slot is free again: the next event takes it back.
    second();
    stream.emit("c");
    await eventually(() => read.seen.length === 3, 5_000, "the third event");
    expect(run.holding).toBe(true);
    expect(slots.inUse).toBe(1);
    stream.end();
    await read.done;
    expect(run.holding).toBe(false);
    expect(slots.inUse).toBe(0);
    expect(read.seen).toEqual(["a", "b", "c"]);
  });

  it("keeps the slot while the stream keeps moving, and while the reader itself is slow", async () => {
    const slots = new Semaphore(1);
    const stream = gatedStream();
    const run = new RunSlot(slots, await slots.acquire(), 200);
    const events = run.guard(stream.iterable);
    stream.emit("a");
    stream.emit("b");
    expect((await events.next()).value?.delta).toBe("a");
    // The reader takes four times the threshold before it asks again; the next event was there all along.
    await sleep(800);
    expect(run.holding).toBe(true);
    expect((await events.next()).value?.delta).toBe("b");
    expect(run.holding).toBe(true);
    expect(slots.tryAcquire()).toBeUndefined();
    await events.return(undefined);
    expect(slots.inUse).toBe(0);
  });

  it("keeps the slot while the process is too busy to read the stream, and gives it up once it is idle again", async () => {
    const slots = new Semaphore(1);
    const stream = gatedStream();
    const run = new RunSlot(slots, await slots.acquire(), 200);
    const read = reader(run.guard(stream.iterable));
    stream.emit("a");
    // From the first text on, the event loop works without pause for eight thresholds (in short
    // tasks, so the reader and the timers still run). Waiting idly for the text first would let a
    // loaded machine's slow poll pass a threshold idle, which rightly frees the slot.
    const until = Date.now() + 1_600;
    while (Date.now() < until) {
      const slice = Date.now() + 20;
      while (Date.now() < slice) {
        // busy
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(read.seen, "the first text").toHaveLength(1);
    expect(run.holding, "a busy process may be why the stream is silent").toBe(true);
    await eventually(() => !run.holding, 5_000, "the slot given up once the process is idle");
    stream.end();
    await read.done;
    expect(slots.inUse).toBe(0);
  });

  it("keeps the slot before the first text and while a tool runs: that is the run's own work", async () => {
    const slots = new Semaphore(1);
    const stream = gatedStream();
    const run = new RunSlot(slots, await slots.acquire(), 100);
    const read = reader(run.guard(stream.iterable));
    await sleep(400);
    expect(run.holding, "no text yet").toBe(true);
    stream.emit("a");
    stream.emit("search", "tool_start");
    await eventually(() => read.seen.length === 2, 5_000, "the tool start");
    await sleep(400);
    expect(run.holding, "a tool runs").toBe(true);
    stream.emit("found", "tool_end");
    stream.emit("b");
    await eventually(() => !run.holding, 5_000, "the slot given up once the reply stalls after text");
    stream.end();
    await read.done;
    expect(slots.inUse).toBe(0);
  });

  it("gives the slot up exactly once when the reader stops early, and closes the stream", async () => {
    const slots = new Semaphore(2);
    const stream = gatedStream();
    const run = new RunSlot(slots, await slots.acquire(), 10_000);
    const events = run.guard(stream.iterable);
    stream.emit("a");
    await events.next();
    await events.return(undefined);
    await eventually(() => stream.returned, 5_000, "the stream closed");
    run.free();
    expect(slots.inUse).toBe(0);
    // The cap still holds: two slots, no more.
    expect(slots.tryAcquire()).toBeDefined();
    expect(slots.tryAcquire()).toBeDefined();
    expect(slots.tryAcquire()).toBeUndefined();
  });

  it("never takes a slot ahead of a run that waits for one", async () => {
    const slots = new Semaphore(1);
    const stream = gatedStream();
    const run = new RunSlot(slots, await slots.acquire(), 50);
    const read = reader(run.guard(stream.iterable));
    stream.emit("first");
    // The stalled run's slot, given up 50 ms after its first text, goes to a second run; a third waits for it.
    const second = await slots.acquire();
    const third = slots.acquire();
    // The second run ends: its slot goes straight to the waiting third, so none is free.
    second();
    const thirdRelease = await third;
    stream.emit("late");
    await eventually(() => read.seen.length === 2, 5_000, "the late event");
    expect(run.holding).toBe(false);
    expect(slots.inUse).toBe(1);
    thirdRelease();
    stream.end();
    await read.done;
    expect(slots.inUse).toBe(0);
  });
});
