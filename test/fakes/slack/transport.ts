/**
 * How the fake Slack delivers events: a Socket Mode WebSocket (hello, envelopes, ack tracking,
 * disconnect) or signed Events API / interactivity POSTs with retry headers.
 */
import { createHmac, randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { Json } from "./web-api.js";

export type EnvelopeType = "events_api" | "interactive";

export interface DeliveryResult {
  /** Socket Mode: the envelope was acked before the timeout. HTTP: the answer was 2xx. */
  ok: boolean;
  status?: number;
  body?: string;
  ackPayload?: unknown;
  /** HTTP: the URL this try went to. */
  url?: string;
  /** The event's `event_id` (events only), to pair a retry with the tries before it. */
  eventId?: string;
  /** 0 for a first try, else the `X-Slack-Retry-Num` it carried. */
  retryNum?: number;
  /** The `X-Slack-Retry-Reason` it carried (retries only). */
  retryReason?: string;
  /** Why Slack counts this try as failed: `http_timeout`, `connection_failed` or `http_error`. */
  failure?: string;
}

export interface SocketAck {
  envelopeId: string;
  payload: unknown;
  at: number;
}

/** The Socket Mode server side. Ack waits time out after `ackTimeoutMs` (Slack: about 3 s). */
export class FakeSocketServer {
  readonly acks: SocketAck[] = [];
  /** Frames that were not acks, for assertions. */
  readonly otherFrames: unknown[] = [];
  connections = 0;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets = new Set<WebSocket>();
  private readonly waiters = new Map<string, (payload: unknown) => void>();
  private connectionWaiters: Array<{ n: number; resolve: () => void }> = [];

  /** How long `deliver` waits for an ack (Slack: about 3 s). */
  ackTimeoutMs = 3000;
  /** Delay before `hello` on a new connection (a slow network), so tests can act in between. */
  helloDelayMs = 0;

  constructor() {
    this.wss.on("connection", (ws) => this.onConnection(ws));
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit("connection", ws, req));
  }

  get open(): number {
    return [...this.sockets].filter((s) => s.readyState === s.OPEN).length;
  }

  /** Resolves once `n` connections in total have said hello. */
  waitForConnections(n: number): Promise<void> {
    if (this.connections >= n) return Promise.resolve();
    return new Promise((resolve) => this.connectionWaiters.push({ n, resolve }));
  }

  async deliver(type: EnvelopeType, payload: Json, retryAttempt = 0, retryReason = ""): Promise<DeliveryResult> {
    const socket = [...this.sockets].find((s) => s.readyState === s.OPEN);
    if (!socket) throw new Error("fake slack: no Socket Mode connection to deliver to");
    const envelopeId = randomUUID();
    const acked = new Promise<{ ok: boolean; payload?: unknown }>((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(envelopeId);
        resolve({ ok: false });
      }, this.ackTimeoutMs);
      this.waiters.set(envelopeId, (p) => {
        clearTimeout(timer);
        resolve({ ok: true, payload: p });
      });
    });
    const envelope: Json = { envelope_id: envelopeId, type, payload, accepts_response_payload: type !== "events_api" };
    if (type === "events_api") Object.assign(envelope, { retry_attempt: retryAttempt, retry_reason: retryReason });
    socket.send(JSON.stringify(envelope));
    const r = await acked;
    return { ok: r.ok, ackPayload: r.payload };
  }

  /** Slack's `{"type":"disconnect"}`: the client should reconnect. */
  askToReconnect(): void {
    for (const s of this.sockets) s.send(JSON.stringify({ type: "disconnect", reason: "refresh_requested" }));
  }

  /** Drops every connection without a close handshake. */
  dropAll(): void {
    for (const s of this.sockets) s.terminate();
  }

  close(): void {
    for (const s of this.sockets) s.terminate();
    this.wss.close();
  }

  private onConnection(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on("close", () => this.sockets.delete(ws));
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { envelope_id?: string; payload?: unknown };
      if (frame.envelope_id) {
        this.acks.push({ envelopeId: frame.envelope_id, payload: frame.payload, at: Date.now() });
        this.waiters.get(frame.envelope_id)?.(frame.payload);
        this.waiters.delete(frame.envelope_id);
      } else this.otherFrames.push(frame);
    });
    if (this.helloDelayMs > 0) setTimeout(() => this.hello(ws), this.helloDelayMs);
    else this.hello(ws);
  }

  private hello(ws: WebSocket): void {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(JSON.stringify({ type: "hello", num_connections: this.sockets.size, debug_info: { host: "fake" } }));
    this.connections += 1;
    const ready = this.connectionWaiters.filter((w) => w.n <= this.connections);
    this.connectionWaiters = this.connectionWaiters.filter((w) => w.n > this.connections);
    for (const w of ready) w.resolve();
  }
}

export interface SignedPostOptions {
  signingSecret: string;
  retryNum?: number;
  retryReason?: string;
  /** Seconds since epoch to sign with; default now. */
  timestamp?: number;
  /** Sign with this secret instead (a forged request). */
  wrongSecret?: string;
  /** Send no signature headers at all. */
  unsigned?: boolean;
  /** Aborts the request (Slack gives up on an answer after 3 s). */
  signal?: AbortSignal;
}

export function slackSignature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

/** POSTs an Events API body (JSON) or an interactivity payload (form) the way Slack signs it. */
export async function postSigned(url: string, type: EnvelopeType, payload: Json, o: SignedPostOptions): Promise<DeliveryResult> {
  const body = type === "events_api" ? JSON.stringify(payload) : `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  const timestamp = o.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    "content-type": type === "events_api" ? "application/json" : "application/x-www-form-urlencoded",
  };
  if (!o.unsigned) {
    headers["x-slack-request-timestamp"] = String(timestamp);
    headers["x-slack-signature"] = slackSignature(o.wrongSecret ?? o.signingSecret, timestamp, body);
  }
  if (o.retryNum) {
    headers["x-slack-retry-num"] = String(o.retryNum);
    headers["x-slack-retry-reason"] = o.retryReason ?? "http_timeout";
  }
  const res = await fetch(url, { method: "POST", headers, body, ...(o.signal ? { signal: o.signal } : {}) });
  const text = await res.text();
  return { ok: res.status >= 200 && res.status < 300, status: res.status, body: text };
}
