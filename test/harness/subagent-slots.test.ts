/** `RunSlots`, the per-run limit of the `task` tool: order, hand-over, abort, and nothing kept after a run. */
import { describe, expect, it } from "vitest";
import { RunSlots } from "../../src/harness/subagents/slots.js";

describe("RunSlots", () => {
  it("gives at most `limit` slots per run, hands freed ones to waiters in order, and keeps runs apart", async () => {
    const slots = new RunSlots(2);
    const a = { run: "a" };
    const b = { run: "b" };
    const first = await slots.acquire(a);
    const second = await slots.acquire(a);
    const order: number[] = [];
    let waits = 0;
    const queued = (n: number) =>
      slots
        .acquire(a, undefined, () => {
          waits++;
        })
        .then((release) => {
          order.push(n);
          return release;
        });
    const third = queued(3);
    const fourth = queued(4);
    // Another run is not held up by this one's line.
    const other = await slots.acquire(b);
    expect([slots.running(a), slots.running(b), waits]).toEqual([2, 1, 2]);

    first();
    first(); // a second call frees nothing more
    const r3 = await third;
    expect(order).toEqual([3]);
    expect(slots.running(a)).toBe(2);
    second();
    const r4 = await fourth;
    expect(order).toEqual([3, 4]);
    r3();
    r4();
    other();
    expect([slots.running(a), slots.running(b)]).toEqual([0, 0]);
  });

  it("a waiter whose signal aborts leaves the line with the signal's reason, and the next one moves up", async () => {
    const slots = new RunSlots(1);
    const held = await slots.acquire("run");
    const controller = new AbortController();
    const gone = slots.acquire("run", controller.signal);
    const next = slots.acquire("run");
    controller.abort(new Error("stopped by the user"));
    await expect(gone).rejects.toThrow("stopped by the user");
    held();
    (await next)();
    expect(slots.running("run")).toBe(0);
    await expect(slots.acquire("run", AbortSignal.abort(new Error("already")))).rejects.toThrow("already");
    expect(slots.running("run")).toBe(0);
  });
});
