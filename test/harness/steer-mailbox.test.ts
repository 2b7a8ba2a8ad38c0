/** The steer mailbox: each message settled once, taken in order, missed when the run ends first. */
import { describe, expect, it } from "vitest";
import { SteerMailbox } from "../../src/harness/steer/mailbox.js";
import type { RunEvent } from "../../src/harness/types.js";

describe("SteerMailbox", () => {
  it("no run: missed at once", async () => {
    expect(await new SteerMailbox().steer("t", "hi")).toBe("missed");
  });

  it("messages taken and confirmed are taken, in the order given; the rest are missed before the closing event", async () => {
    const mailbox = new SteerMailbox();
    const outcomes: Array<Promise<string>> = [];
    let taken: string[] = [];
    let settledAtDone: string[] | undefined;
    const settled: string[] = [];
    const run = mailbox.during("t", async function* (steer) {
      outcomes.push(mailbox.steer("t", "one"), mailbox.steer("t", "two"));
      for (const [i, p] of outcomes.entries()) void p.then((o) => settled.push(`${i}:${o}`));
      taken = steer.take().map((m) => m.text);
      steer.confirm();
      outcomes.push(mailbox.steer("t", "three"));
      void outcomes[2]?.then((o) => settled.push(`2:${o}`));
      yield { type: "text", delta: "x" } as RunEvent;
      await Promise.resolve();
      yield { type: "done", text: "x" } as RunEvent;
    });
    for await (const e of run) {
      if (e.type === "done") {
        await Promise.resolve();
        settledAtDone = [...settled];
      }
    }
    expect(taken).toEqual(["one", "two"]);
    expect(await Promise.all(outcomes)).toEqual(["taken", "taken", "missed"]);
    expect(settledAtDone).toContain("2:missed");
    expect(await mailbox.steer("t", "late")).toBe("missed");
  });

  it("a message keeps the id it was given, and gets a new one without", async () => {
    const mailbox = new SteerMailbox();
    let taken: Array<{ text: string; id: string }> = [];
    const run = mailbox.during("v", async function* (steer) {
      void mailbox.steer("v", "named", "id-1");
      void mailbox.steer("v", "unnamed");
      taken = steer.take();
      steer.confirm();
      yield { type: "done", text: "" } as RunEvent;
    });
    for await (const _ of run) {
      // drain
    }
    expect(taken[0]).toEqual({ text: "named", id: "id-1" });
    expect(taken[1]?.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("handed-over messages put back wait again ahead of newer ones; unconfirmed ones are missed at the end", async () => {
    const mailbox = new SteerMailbox();
    const order: string[][] = [];
    const outcomes: Array<Promise<string>> = [];
    const run = mailbox.during("u", async function* (steer) {
      outcomes.push(mailbox.steer("u", "a"));
      order.push(steer.take().map((m) => m.text));
      outcomes.push(mailbox.steer("u", "b"));
      steer.putBack();
      order.push(steer.take().map((m) => m.text));
      yield { type: "error", code: "internal", message: "x" } as RunEvent;
    });
    for await (const _ of run) {
      // drain
    }
    expect(order).toEqual([["a"], ["a", "b"]]);
    expect(await Promise.all(outcomes)).toEqual(["missed", "missed"]);
  });
});
