/**
 * A run's hold on its run slot (`gateway.max_concurrent_runs`). A run whose event stream has sent
 * nothing for `gateway.stall_release_ms` gives its slot to the next message: a stalled model
 * stream holds no work worth a slot, and however many stall, the others still run. When the
 * stream moves again the run takes a slot back if one is free, and otherwise carries on without
 * one; it never waits for a slot, since that would stall a reply already under way.
 *
 * Only a reply stream that stopped in the middle counts: the clock runs while the run waits
 * right after a text event, the one kind that comes from inside a model's stream. Before its
 * first text, and after a tool starts, a run is busy with its own work (loading the thread,
 * writing checkpoints, running the tool), which the slots exist to pace: a database or a CPU
 * that is slow to serve it must not let more runs in. For the same reason a silent run gives its
 * slot up only if the event loop was mostly idle while it waited: otherwise the stream may be
 * starved by this process, not stalled by its model.
 */
import { performance } from "node:perf_hooks";
import type { Semaphore } from "./queue.js";

/** Busier than this (the share of the wait the event loop was working), a silent stream may be starved, not stalled. */
const BUSY_LOOP = 0.8;

export class RunSlot {
  private release: (() => void) | undefined;

  /**
   * @param slots the global run limit.
   * @param held the release of the slot the run already holds.
   * @param stallMs how long a reply may stop mid-text before the slot is given up.
   */
  constructor(
    private readonly slots: Semaphore,
    held: () => void,
    private readonly stallMs: number,
  ) {
    this.release = held;
  }

  /** Whether the run holds a slot now. */
  get holding(): boolean {
    return this.release !== undefined;
  }

  /** Gives the slot up, if the run holds one (it stalled, or it ended). */
  free(): void {
    const release = this.release;
    this.release = undefined;
    release?.();
  }

  /**
   * Passes `events` through. While the run waits for the event after a text event, a timer
   * gives the slot up after `stallMs` (unless the event loop was busy meanwhile); an event that
   * comes takes one back if one is free now. Only time spent waiting on the stream counts: the
   * reader's own pauses between events do not. The slot is given up for good when the events
   * end or the reader stops.
   */
  async *guard<T extends { type: string }>(events: AsyncIterable<T>): AsyncGenerator<T> {
    const iterator = events[Symbol.asyncIterator]();
    // One timer for the whole run, armed (refreshed) only while it waits for the stream, as the
    // model's stall guard does: no timer per event. It acts only mid-reply (the last event was text).
    let waiting = false;
    let midReply = false;
    let since = performance.eventLoopUtilization();
    const timer = setTimeout(() => {
      if (!waiting || !midReply) return;
      if (performance.eventLoopUtilization(since).utilization < BUSY_LOOP) return this.free();
      // The process was busy: look again once another threshold has passed.
      since = performance.eventLoopUtilization();
      timer.refresh();
    }, this.stallMs);
    timer.unref();
    let finished = false;
    try {
      for (;;) {
        waiting = true;
        since = performance.eventLoopUtilization();
        timer.refresh();
        let next: IteratorResult<T>;
        try {
          next = await iterator.next();
        } finally {
          waiting = false;
        }
        if (next.done) {
          finished = true;
          return;
        }
        this.release ??= this.slots.tryAcquire();
        midReply = next.value.type === "text";
        yield next.value;
      }
    } catch (err) {
      finished = true;
      throw err;
    } finally {
      clearTimeout(timer);
      this.free();
      // The reader stopped early: let the stream clean up, without waiting on it.
      if (!finished) {
        Promise.resolve()
          .then(() => iterator.return?.())
          .catch(() => undefined);
      }
    }
  }
}
