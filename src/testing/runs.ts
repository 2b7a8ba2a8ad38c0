/** Reading a harness run's events in tests: all of them, the closing one, the text deltas. */
import type { RunEvent } from "../harness/types.js";

/** Every event of a run, in order. */
export async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** The one closing event of a run; fails when there is not exactly one. */
export function last(events: RunEvent[]): RunEvent {
  const closing = events.filter((e) => e.type === "done" || e.type === "clarification" || e.type === "error");
  if (closing.length !== 1 || closing[0] !== events.at(-1)) {
    throw new Error(`expected exactly one closing event at the end, got ${JSON.stringify(events.map((e) => e.type))}`);
  }
  return closing[0] as RunEvent;
}

/** The text deltas of a run, in order. */
export function deltas(events: RunEvent[]): string[] {
  return events.flatMap((e) => (e.type === "text" ? [e.delta] : []));
}

/** Iterates a run until `until` matches, then calls `act`, then drains it. */
export async function runUntil(events: AsyncIterable<RunEvent>, until: (e: RunEvent) => boolean, act: () => void) {
  const seen: RunEvent[] = [];
  let acted = false;
  for await (const e of events) {
    seen.push(e);
    if (!acted && until(e)) {
      acted = true;
      act();
    }
  }
  return seen;
}
