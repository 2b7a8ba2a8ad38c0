/**
 * A fake relay (the platform of examples/channel): an HTTP server that takes the channel's
 * outbox calls and records what a user would see, serves the files users send, and POSTs users'
 * events to the channel's webhook. Like a strict platform it refuses a wrong token and an edit
 * that changes nothing (409).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RelayMessage {
  id: string;
  room: string;
  text: string;
  buttons: Array<{ id: string; label: string }>;
  question?: string;
  versions: Array<{ text: string; at: number }>;
}

export interface RelayFile {
  room: string;
  name: string;
  kind: "image" | "file";
  data: Uint8Array;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export class FakeRelay {
  readonly secret = "relay-secret";
  readonly messages: RelayMessage[] = [];
  readonly files: RelayFile[] = [];
  /** Files users sent, served at `/files/<id>`. */
  private readonly uploads = new Map<string, Uint8Array>();
  private seq = 1;
  private server: Server | undefined;
  url = "";

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      void this.handle(req).then(
        ({ status, body, bytes }) => {
          res.writeHead(status, { "content-type": bytes ? "application/octet-stream" : "application/json" });
          res.end(bytes ?? JSON.stringify(body ?? {}));
        },
        (err: unknown) => {
          res.writeHead(500);
          res.end(String(err));
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  /** Keeps a file a user sends; returns the URL the event carries. */
  upload(data: Uint8Array): string {
    const id = `f${this.seq++}`;
    this.uploads.set(id, new Uint8Array(data));
    return `${this.url}/files/${id}`;
  }

  /** POSTs `event` to the channel's webhook at `webhookUrl`; resolves with the HTTP status. */
  async deliver(webhookUrl: string, event: Record<string, unknown>): Promise<number> {
    const res = await fetch(webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${this.secret}` },
      body: JSON.stringify(event),
    });
    await res.text();
    return res.status;
  }

  private async handle(req: IncomingMessage): Promise<{ status: number; body?: unknown; bytes?: Uint8Array }> {
    if (req.headers.authorization !== `Bearer ${this.secret}`) return { status: 401, body: { error: "bad token" } };
    const file = /^\/files\/(\w+)$/.exec(req.url ?? "");
    if (req.method === "GET" && file) {
      const bytes = this.uploads.get(file[1] ?? "");
      return bytes ? { status: 200, bytes } : { status: 404 };
    }
    if (req.method !== "POST" || req.url !== "/outbox") return { status: 404 };
    return this.outboxCall(JSON.parse(await bodyOf(req)) as Record<string, unknown>);
  }

  private outboxCall(call: Record<string, unknown>): { status: number; body?: unknown } {
    const room = String(call.room);
    const text = String(call.text ?? "");
    if (call.op === "send") {
      const buttons = (call.buttons as RelayMessage["buttons"] | undefined) ?? [];
      const id = `m${this.seq++}`;
      const question = typeof call.question === "string" ? call.question : undefined;
      this.messages.push({ id, room, text, buttons, ...(question ? { question } : {}), versions: [{ text, at: Date.now() }] });
      return { status: 200, body: { id } };
    }
    if (call.op === "edit") {
      const message = this.messages.find((m) => m.id === call.id && m.room === room);
      if (!message) return { status: 404, body: { error: "no such message" } };
      // An edit without buttons keeps the message's; an empty list takes them away.
      const buttons = (call.buttons as RelayMessage["buttons"] | undefined) ?? message.buttons;
      if (message.text === text && JSON.stringify(message.buttons) === JSON.stringify(buttons)) return { status: 409 };
      message.text = text;
      message.buttons = buttons;
      if (typeof call.question === "string") message.question = call.question;
      message.versions.push({ text, at: Date.now() });
      return { status: 200, body: {} };
    }
    if (call.op === "file") {
      const kind = call.kind === "image" ? "image" : "file";
      this.files.push({ room, name: String(call.name), kind, data: new Uint8Array(Buffer.from(String(call.data), "base64")) });
      return { status: 200, body: { id: `m${this.seq++}` } };
    }
    return { status: 400, body: { error: `unknown op ${String(call.op)}` } };
  }
}
