/** A caller of `POST /api/send` and `GET /api/send/:id` against a test gateway, for the outbox tests. */
import { expect } from "vitest";
import { eventually, startTestGateway, type TestGateway } from "../contract/gateway.js";

/** The outbox looks for work and tries again quickly in these tests. */
const OUTBOX = { poll_ms: 100, retry_backoff_ms: 100 };

/** A gateway with `channels`, every one of them running, and a client of its send API. */
export async function sendGateway(
  channels: Record<string, Record<string, unknown>>,
  port?: number,
): Promise<{ gw: TestGateway; api: SendClient }> {
  const gw = await startTestGateway({ channels, ...(port ? { port } : {}), sections: { outbox: OUTBOX } });
  for (const name of Object.keys(channels)) expect(gw.gateway.slot(name)?.report().state).toBe("running");
  return { gw, api: new SendClient(gw) };
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  replayed: boolean;
}

export class SendClient {
  constructor(private readonly gw: TestGateway) {}

  async send(body: unknown, key: string): Promise<Answer> {
    const res = await fetch(`${this.gw.url}/api/send`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown>,
      replayed: res.headers.get("idempotent-replayed") === "true",
    };
  }

  async show(id: string): Promise<Record<string, unknown>> {
    const res = await fetch(`${this.gw.url}/api/send/${id}`);
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  }

  /** Sends, expects the 202, and waits until the entry is `sent` or `failed`; returns what GET shows then. */
  async settled(body: unknown, key: string): Promise<Record<string, unknown>> {
    const accepted = await this.send(body, key);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const id = accepted.body.id as string;
    return eventually(
      async () => {
        const shown = await this.show(id);
        return shown.state === "sent" || shown.state === "failed" ? shown : undefined;
      },
      30_000,
      `send ${id} settled`,
    );
  }
}

/** A body for `channel` and `target` with `text`. */
export const sendBody = (channel: string, target: Record<string, string>, text: string) => ({ channel, target, text });

/** Markdown every platform formats, and what a person reads once it is drawn. */
export const MARKDOWN = "**Deploy** finished: build `42` is _live_";
export const VISIBLE = "Deploy finished: build 42 is live";
