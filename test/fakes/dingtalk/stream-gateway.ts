/**
 * The Stream-mode side of the fake DingTalk: `connections/open` hands out one-time tickets, the
 * WebSocket carries SYSTEM and CALLBACK frames, and every CALLBACK frame must be acked with its
 * messageId. An unacked frame is sent again after `resendAfterMs`, like DingTalk does (~60 s).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";

export interface CallbackFrame {
  specVersion: string;
  type: "CALLBACK" | "SYSTEM" | "EVENT";
  headers: Record<string, string>;
  data: string;
}

export interface AckRecord {
  messageId: string;
  code: number;
  data: unknown;
  at: number;
}

interface Pending {
  frame: CallbackFrame;
  timer: ReturnType<typeof setTimeout> | undefined;
  sends: number;
}

export class StreamGateway {
  readonly acks: AckRecord[] = [];
  /** Every CALLBACK frame sent, resends included. */
  readonly sent: CallbackFrame[] = [];
  /** Topics the client subscribed to in its last connections/open call. */
  subscriptions: Array<{ type: string; topic: string }> = [];
  /** How many connections were opened (reconnects included). */
  connections = 0;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly tickets = new Set<string>();
  private readonly pending = new Map<string, Pending>();
  private socket: WebSocket | undefined;
  private acksToDrop = 0;
  private seq = 0;

  constructor(
    private readonly appId: string,
    public resendAfterMs: number,
  ) {}

  /** Answers connections/open: a ticket for the WebSocket at `wsUrl`. */
  open(subscriptions: Array<{ type: string; topic: string }>, wsUrl: string): { endpoint: string; ticket: string } {
    this.subscriptions = subscriptions;
    const ticket = randomUUID();
    this.tickets.add(ticket);
    return { endpoint: wsUrl, ticket };
  }

  /** HTTP upgrade to the stream socket; the ticket is single-use. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const ticket = new URL(req.url ?? "/", "http://x").searchParams.get("ticket") ?? "";
    if (!this.tickets.delete(ticket)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\n\r\n");
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws));
  }

  get connected(): boolean {
    return this.socket?.readyState === 1;
  }

  subscribed(topic: string): boolean {
    return this.subscriptions.some((s) => s.type === "CALLBACK" && s.topic === topic);
  }

  /** Sends a CALLBACK frame and tracks its ack; returns the frame's messageId. */
  deliver(topic: string, data: unknown): string {
    if (!this.subscribed(topic)) throw new Error(`fake dingtalk: client did not subscribe to ${topic}`);
    const messageId = `msg-${++this.seq}-${randomUUID().slice(0, 8)}`;
    const frame: CallbackFrame = {
      specVersion: "1.0",
      type: "CALLBACK",
      headers: {
        appId: this.appId,
        connectionId: "conn-1",
        contentType: "application/json",
        messageId,
        time: String(Date.now()),
        topic,
      },
      data: JSON.stringify(data),
    };
    this.pending.set(messageId, { frame, timer: undefined, sends: 0 });
    this.push(messageId);
    return messageId;
  }

  /** Sends a frame again with the same messageId, acked or not (a platform duplicate). */
  redeliver(messageId: string): void {
    const frame = this.sent.find((f) => f.headers.messageId === messageId);
    if (!frame) throw new Error(`fake dingtalk: no frame ${messageId}`);
    this.sent.push(frame);
    this.socket?.send(JSON.stringify(frame));
  }

  /** The next `n` acks are lost on the way (the frames get resent later). */
  dropAcks(n: number): void {
    this.acksToDrop += n;
  }

  acked(messageId: string): boolean {
    return this.acks.some((a) => a.messageId === messageId);
  }

  /** Sends a SYSTEM frame (e.g. `ping`, which the client must echo, or `disconnect`). */
  system(topic: string, data = "{}"): void {
    const frame = { specVersion: "1.0", type: "SYSTEM", headers: { topic, messageId: `sys-${++this.seq}` }, data };
    this.socket?.send(JSON.stringify(frame));
  }

  /** Kills the socket without a close handshake (a network drop). */
  dropSocket(): void {
    this.socket?.terminate();
  }

  close(): void {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }

  private push(messageId: string): void {
    const p = this.pending.get(messageId);
    if (!p) return;
    clearTimeout(p.timer);
    if (this.connected) {
      p.sends++;
      this.sent.push(p.frame);
      this.socket?.send(JSON.stringify(p.frame));
    }
    // Unacked (or undeliverable while offline): try again later.
    p.timer = setTimeout(() => this.push(messageId), this.connected ? this.resendAfterMs : 50);
  }

  private attach(ws: WebSocket): void {
    this.socket?.terminate();
    this.socket = ws;
    this.connections++;
    ws.on("message", (raw) => this.onClientFrame(String(raw)));
    ws.on("close", () => {
      if (this.socket === ws) this.socket = undefined;
    });
    this.system("CONNECTED");
    this.system("REGISTERED");
    // Frames waiting for a connection go out now.
    for (const id of this.pending.keys()) this.push(id);
  }

  readonly pings: unknown[] = [];

  private onClientFrame(text: string): void {
    let msg: { code?: number; headers?: { messageId?: string; topic?: string }; data?: string };
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    const id = msg.headers?.messageId;
    if (msg.headers?.topic === "ping") {
      this.pings.push(msg);
      return;
    }
    if (!id || !this.sent.some((f) => f.headers.messageId === id)) return;
    if (this.acksToDrop > 0) {
      this.acksToDrop--;
      return;
    }
    const p = this.pending.get(id);
    clearTimeout(p?.timer);
    this.pending.delete(id);
    let data: unknown = msg.data;
    try {
      data = JSON.parse(msg.data ?? "null");
    } catch {}
    this.acks.push({ messageId: id, code: msg.code ?? 0, data, at: Date.now() });
  }
}
