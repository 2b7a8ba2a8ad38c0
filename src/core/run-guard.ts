/**
 * A guard between a run's event stream and the renderer: once the run was aborted (`/stop`,
 * timeout, shutdown), the backend gets a short grace period to end by itself; a backend that
 * ignores its signal is then left behind, so it cannot hold a conversation or a run slot forever.
 */
import { toRunError } from "../harness/run-errors.js";
import type { RunEvent } from "../harness/types.js";

/**
 * How long a run may go on after its abort (`/stop`, timeout, shutdown) before the dispatcher
 * stops waiting for the backend and ends it itself: a backend that ignores its signal must not
 * hold the conversation and a global run slot forever.
 */
const ABANDON_AFTER_ABORT_MS = 2_000;

/**
 * Passes `events` through until the run ends by itself, or until `signal` has been aborted for
 * {@link ABANDON_AFTER_ABORT_MS}: then it stops waiting for the backend and ends the run with the
 * error event the abort stands for (timeout or cancel), leaving the backend's iterator behind.
 */
export async function* untilAbandoned(
  events: AsyncIterable<RunEvent>,
  signal: AbortSignal,
  onAbandon: (reason: unknown) => void,
): AsyncGenerator<RunEvent> {
  const iterator = events[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const abandoned = new Promise<"abandoned">((resolve) => {
    const arm = () => {
      timer = setTimeout(() => resolve("abandoned"), ABANDON_AFTER_ABORT_MS);
    };
    if (signal.aborted) arm();
    else signal.addEventListener("abort", arm, { once: true });
  });
  let finished = false;
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), abandoned]);
      if (next === "abandoned") {
        onAbandon(signal.reason);
        // Not awaited: a hung backend may never answer this either.
        closeQuietly(iterator);
        finished = true;
        const { code, message } = toRunError(signal.reason, true, signal.reason);
        yield { type: "error", code, message };
        return;
      }
      if (next.done) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } finally {
    clearTimeout(timer);
    // The consumer stopped early (the reply failed): let the backend clean up, without waiting on it.
    if (!finished) closeQuietly(iterator);
  }
}

function closeQuietly(iterator: AsyncIterator<RunEvent>): void {
  Promise.resolve()
    .then(() => iterator.return?.())
    .catch(() => undefined);
}
