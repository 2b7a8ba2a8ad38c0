/**
 * How the fake Slack posts Events API and interactivity requests when the app sits behind
 * several URLs (one per gateway replica, as a load balancer would spread them): each try goes to
 * one URL, round-robin or at random, and a retry always goes to another URL than the try before.
 *
 * Slack retries an event (not an interactivity payload) when a try got no 2xx within 3 s or
 * failed, up to 3 times — immediately, after 1 min, after 5 min — with `X-Slack-Retry-Num` and
 * `X-Slack-Retry-Reason`. Tests shorten the delays. Faults make first tries fail on purpose:
 * `timeout` reaches the app but its answer is treated as late (the app has the event, Slack
 * thinks not), `connection_failed` never reaches it.
 */

import { seeded } from "../../helpers/seeded.js";
import type { EnvelopeType } from "./transport.js";
import { type DeliveryResult, postSigned } from "./transport.js";
import type { Json } from "./web-api.js";

export interface DeliveryFault {
  kind: "timeout" | "connection_failed";
  /** Share of matching tries it hits, from a seeded generator (default: every one, `times` times). */
  probability?: number;
  /** Fire this many times (default: unlimited with `probability`, else 1). */
  times?: number;
  seed?: number;
  /** Hit retries too (default: first tries only, so every event gets through in the end). */
  retriesToo?: boolean;
}

export interface HttpDeliveryOptions {
  /** How tries are spread over the URLs (default round-robin). */
  spread?: "round-robin" | "random";
  /**
   * Delays before retries 1, 2, 3 of an event (Slack: 0, 60 000, 300 000 ms). Unset: no
   * automatic retries, one try per delivery (a test retries with `redeliverLast`).
   */
  retryDelaysMs?: number[];
  /** How long a try may take before it counts as timed out (Slack: 3 s). */
  ackTimeoutMs?: number;
}

/** One event or payload as it travels: its retries so far and the URL its last try went to. */
export interface Delivered {
  type: EnvelopeType;
  payload: Json;
  retries: number;
  lastUrl?: string;
}

interface ActiveFault extends DeliveryFault {
  left: number;
  rng: () => number;
}

export class HttpDelivery {
  private next = 0;
  private readonly faults: ActiveFault[] = [];
  private readonly rng = seeded(11);

  constructor(
    /** The URLs to post to, read at each try (a test may change them). */
    private readonly urls: () => string[],
    private readonly signingSecret: string,
    readonly options: HttpDeliveryOptions,
  ) {}

  inject(fault: DeliveryFault): void {
    const left = fault.times ?? (fault.probability !== undefined ? Number.POSITIVE_INFINITY : 1);
    this.faults.push({ ...fault, left, rng: seeded(fault.seed ?? 1) });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  /**
   * Posts `d`, and for an event retries it as Slack would until a try is answered 2xx or the
   * retries run out. Every try is handed to `record`; the last one is returned.
   */
  async deliver(d: Delivered, record: (r: DeliveryResult) => void): Promise<DeliveryResult> {
    const delays = d.type === "events_api" ? this.options.retryDelaysMs : undefined;
    let reason: string | undefined;
    for (;;) {
      const result = await this.tryOnce(d, reason);
      record(result);
      if (result.ok || !delays || d.retries >= delays.length) return result;
      await new Promise((r) => setTimeout(r, delays[d.retries]));
      d.retries += 1;
      reason = result.failure;
    }
  }

  /** One try at one URL, never the one the previous try of `d` went to (when there is a choice). */
  private async tryOnce(d: Delivered, reason: string | undefined): Promise<DeliveryResult> {
    const url = this.pick(d.lastUrl);
    d.lastUrl = url;
    const eventId = typeof d.payload.event_id === "string" ? { eventId: d.payload.event_id } : {};
    const base = { url, retryNum: d.retries, ...eventId, ...(d.retries > 0 ? { retryReason: reason ?? "http_timeout" } : {}) };
    const fault = this.faultFor(d);
    if (fault?.kind === "connection_failed") return { ok: false, failure: "connection_failed", ...base };
    const timeoutMs = this.options.ackTimeoutMs ?? 3000;
    try {
      const r = await postSigned(url, d.type, d.payload, {
        signingSecret: this.signingSecret,
        retryNum: d.retries,
        ...(base.retryReason ? { retryReason: base.retryReason } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
      // The app answered, but (by the fault) too late for Slack: it has the event all the same.
      if (fault?.kind === "timeout") return { ...r, ...base, ok: false, failure: "http_timeout" };
      return { ...r, ...base, ...(r.ok ? {} : { failure: "http_error" }) };
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
      return { ok: false, failure: timedOut ? "http_timeout" : "connection_failed", ...base };
    }
  }

  private pick(previous: string | undefined): string {
    const urls = this.urls();
    if (urls.length === 0) throw new Error("fake slack: no events URL is set");
    const choices = urls.length > 1 && previous !== undefined ? urls.filter((u) => u !== previous) : urls;
    if (this.options.spread === "random") return choices[Math.floor(this.rng() * choices.length)] as string;
    const url = choices[this.next % choices.length] as string;
    this.next += 1;
    return url;
  }

  private faultFor(d: Delivered): ActiveFault | undefined {
    if (d.type !== "events_api") return undefined;
    for (const f of this.faults) {
      if (f.left <= 0 || (d.retries > 0 && !f.retriesToo)) continue;
      if (f.probability !== undefined && f.rng() >= f.probability) continue;
      f.left--;
      return f;
    }
    return undefined;
  }
}
