/**
 * What the pipeline tells the operator's side as messages pass: the observer the gateway hands
 * the dispatcher (the Prometheus metrics, src/ops/metrics.ts), and, from the same events, the
 * counters of each channel's slot that `/api/channels` shows. The pipeline emits each event once,
 * through the channel's {@link ChannelEvents}; this is the one place that counts them for the slot.
 */
import type { ChannelSlot } from "../channels/registry.js";
import type { RenderOutcome } from "./render/index.js";

/** Optional observer for metrics; every method is a notification only. */
export interface DispatcherObserver {
  inbound?(channel: string): void;
  runStarted?(channel: string): void;
  runFinished?(channel: string, outcome: RenderOutcome["kind"], seconds: number): void;
  firstVisible?(channel: string, seconds: number): void;
  rateLimited?(channel: string): void;
  /** A platform API call succeeded (`send`, `edit`, `stream`). */
  apiCall?(channel: string, kind: string): void;
  /** A platform API call failed; `code` is the error's code (e.g. `rate_limited`, `not_found`). */
  apiError?(channel: string, code: string): void;
}

/** The observer's events for one channel. */
export interface ChannelEvents {
  inbound(): void;
  runStarted(): void;
  runFinished(outcome: RenderOutcome["kind"], seconds: number): void;
  firstVisible(seconds: number): void;
  rateLimited(): void;
  apiCall(kind: string): void;
  apiError(code: string): void;
}

/** The slot's counters, kept from the observer's events. */
function slotCounters(slot: ChannelSlot): DispatcherObserver {
  const counters = slot.counters;
  return {
    inbound: () => void counters.inbound++,
    runStarted: () => void counters.runs++,
    runFinished: (_channel, outcome) => {
      if (outcome === "done") counters.replies++;
    },
    rateLimited: () => void counters.rate_limited++,
  };
}

/** The events of `slot`'s channel, counted on the slot and passed on to `observer`. */
export function channelEvents(slot: ChannelSlot, observer: DispatcherObserver | undefined): ChannelEvents {
  const observers = [slotCounters(slot), ...(observer ? [observer] : [])];
  const name = slot.name;
  const each = (notify: (o: DispatcherObserver) => void) => {
    for (const o of observers) notify(o);
  };
  return {
    inbound: () => each((o) => o.inbound?.(name)),
    runStarted: () => each((o) => o.runStarted?.(name)),
    runFinished: (outcome, seconds) => each((o) => o.runFinished?.(name, outcome, seconds)),
    firstVisible: (seconds) => each((o) => o.firstVisible?.(name, seconds)),
    rateLimited: () => each((o) => o.rateLimited?.(name)),
    apiCall: (kind) => each((o) => o.apiCall?.(name, kind)),
    apiError: (code) => each((o) => o.apiError?.(name, code)),
  };
}
