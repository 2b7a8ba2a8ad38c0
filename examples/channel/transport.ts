/**
 * The relay's outbound side: each call is one JSON POST to `outbox_url`, with the shared secret
 * as a bearer token. A refusal comes back as a {@link RelayRefusal} carrying the HTTP status;
 * `map-error.ts` turns it into the error the core acts on.
 */
import type { ButtonSpec } from "antler/channel";

/** A call the relay answered with a non-2xx status. */
export class RelayRefusal extends Error {
  constructor(
    readonly status: number,
    /** The relay's `Retry-After`, in seconds, when it sent one. */
    readonly retryAfterS: number | undefined,
    detail: string,
  ) {
    super(`HTTP ${status}${detail ? `: ${detail}` : ""}`);
  }
}

/** What the relay answers a send or a file with. */
export interface Posted {
  id: string;
}

/** What a message shows on the relay: plain text, and the buttons of a question. */
export interface Shown {
  text: string;
  buttons?: ButtonSpec[];
  /** The question the buttons answer; a click carries it back. */
  question?: string;
}

/** One outbound call: the relay's `op` and its fields. */
export type OutboxCall =
  | ({ op: "send"; room: string } & Shown)
  | ({ op: "edit"; room: string; id: string } & Shown)
  | { op: "file"; room: string; name: string; mime: string; kind: "image" | "file"; data: string };

export class Outbox {
  constructor(
    private readonly url: string,
    private readonly secret: string,
  ) {}

  /** The `Authorization` header the relay expects, both ways. */
  get auth(): Record<string, string> {
    return { authorization: `Bearer ${this.secret}` };
  }

  /** POSTs `call`; resolves with the relay's JSON answer, or throws a fetch error or a {@link RelayRefusal}. */
  async post(call: OutboxCall, signal?: AbortSignal): Promise<Partial<Posted>> {
    const res = await fetch(this.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...this.auth },
      body: JSON.stringify(call),
      ...(signal ? { signal } : {}),
    });
    const body = await res.text();
    if (!res.ok) {
      const retryAfter = Number(res.headers.get("retry-after"));
      throw new RelayRefusal(
        res.status,
        Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
        body.slice(0, 200),
      );
    }
    return body ? (JSON.parse(body) as Partial<Posted>) : {};
  }
}
