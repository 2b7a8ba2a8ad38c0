/**
 * The server side of the long connection. Clients connect with the ticket the endpoint handed
 * out; pings get pongs carrying the client config; events go to one random open connection as
 * data frames (split into `sum` parts when asked) and resolve with the client's ack.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import { CONTROL, DATA, decodeFrame, encodeFrame, type Frame, header } from "./wire.js";

export const SERVICE_ID = 7;

/** What the client answered to one event. `data` is the handler's return value (card callbacks). */
export interface WsAck {
  code: number;
  data?: unknown;
  ms: number;
}

interface Waiting {
  resolve(ack: WsAck): void;
  reject(err: Error): void;
  sentAt: number;
  timer: NodeJS.Timeout;
}

export class FakeWsServer {
  readonly wss = new WebSocketServer({ noServer: true });
  readonly sockets = new Set<WebSocket>();
  /** Frames the clients sent, decoded. */
  readonly received: Frame[] = [];
  private readonly tickets = new Set<string>();
  private readonly waiting = new Map<string, Waiting>();
  private seq = 1;
  /** Split event payloads into parts of at most this many bytes (0 = one part). */
  splitBytes = 0;

  issueTicket(): string {
    const ticket = randomBytes(8).toString("hex");
    this.tickets.add(ticket);
    return ticket;
  }

  /** Handles an HTTP upgrade on `/ws`; refuses unknown tickets like the platform refuses stale URLs. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? "/", "http://fake");
    const ticket = url.searchParams.get("ticket") ?? "";
    if (url.pathname !== "/ws" || !this.tickets.delete(ticket)) {
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws));
  }

  get connected(): number {
    return [...this.sockets].filter((s) => s.readyState === s.OPEN).length;
  }

  /** Sends one event to a random open connection and waits for its ack. */
  deliver(payload: unknown, timeoutMs = 5000): Promise<WsAck> {
    const open = [...this.sockets].filter((s) => s.readyState === s.OPEN);
    const socket = open[Math.floor(Math.random() * open.length)];
    if (!socket) return Promise.reject(new Error("no long connection is open"));
    const messageId = `msg_${randomBytes(6).toString("hex")}`;
    const bytes = Buffer.from(JSON.stringify(payload));
    const size = this.splitBytes > 0 ? this.splitBytes : bytes.length || 1;
    const parts: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
    return new Promise<WsAck>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(messageId);
        reject(new Error(`no ack for ${messageId} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(messageId, { resolve, reject, sentAt: Date.now(), timer });
      parts.forEach((part, i) => {
        const frame: Frame = {
          SeqID: this.seq++,
          LogID: 0,
          service: SERVICE_ID,
          method: DATA,
          headers: [
            { key: "type", value: "event" },
            { key: "message_id", value: messageId },
            { key: "sum", value: String(parts.length) },
            { key: "seq", value: String(i) },
            { key: "trace_id", value: randomBytes(4).toString("hex") },
          ],
          payload: part,
        };
        socket.send(encodeFrame(frame));
      });
    });
  }

  /** Drops every connection, as a network failure would. */
  dropAll(): void {
    for (const s of this.sockets) s.terminate();
  }

  async close(): Promise<void> {
    for (const w of this.waiting.values()) {
      clearTimeout(w.timer);
      w.reject(new Error("fake closed"));
    }
    this.waiting.clear();
    this.dropAll();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private attach(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on("close", () => this.sockets.delete(ws));
    ws.on("error", () => this.sockets.delete(ws));
    ws.on("message", (data: Buffer) => this.onFrame(ws, data));
  }

  private onFrame(ws: WebSocket, data: Buffer): void {
    const frame = decodeFrame(data);
    this.received.push(frame);
    const type = header(frame, "type");
    if (frame.method === CONTROL && type === "ping") {
      const config = { PingInterval: 120, ReconnectCount: -1, ReconnectInterval: 0.2, ReconnectNonce: 0 };
      const pong: Frame = {
        SeqID: 0,
        LogID: 0,
        service: frame.service,
        method: CONTROL,
        headers: [{ key: "type", value: "pong" }],
        payload: Buffer.from(JSON.stringify(config)),
      };
      ws.send(encodeFrame(pong));
      return;
    }
    if (frame.method !== DATA) return;
    const waiting = this.waiting.get(header(frame, "message_id") ?? "");
    if (!waiting) return;
    this.waiting.delete(header(frame, "message_id") ?? "");
    clearTimeout(waiting.timer);
    const body = JSON.parse(Buffer.from(frame.payload ?? []).toString("utf8")) as { code: number; data?: string };
    const ack: WsAck = { code: body.code, ms: Date.now() - waiting.sentAt };
    if (body.data) ack.data = JSON.parse(Buffer.from(body.data, "base64").toString("utf8"));
    waiting.resolve(ack);
  }
}
