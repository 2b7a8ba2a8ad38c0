/**
 * The fake's Gateway: a WebSocket speaking Discord's JSON encoding (no compression). HELLO,
 * IDENTIFY checked against the token and the privileged intents (closes 4004 / 4014), READY then
 * GUILD_CREATE, heartbeats acknowledged. Each session numbers its dispatches (`s`) and keeps them,
 * so a client that lost its connection RESUMEs on `resume_gateway_url` and gets every event it
 * missed before RESUMED. Faults: a dropped socket (1006), op 7 RECONNECT, op 9 INVALID_SESSION,
 * a revoked token (4004).
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import { snowflake } from "./world.js";

export const Intent = {
  Guilds: 1 << 0,
  GuildMessages: 1 << 9,
  DirectMessages: 1 << 12,
  MessageContent: 1 << 15,
} as const;

/** Privileged intents: GuildMembers, GuildPresences, MessageContent. */
const PRIVILEGED = (1 << 1) | (1 << 8) | Intent.MessageContent;

export interface GatewayHost {
  readonly token: string;
  readonly revoked: boolean;
  readonly privilegedIntents: boolean;
  readonly heartbeatIntervalMs: number;
  readonly resumeUrl: string;
  /** The READY payload for a new session (without session id / resume url). */
  ready(): Record<string, unknown>;
  /** Dispatches sent right after READY (GUILD_CREATE), for these intents. */
  afterReady(intents: number): Array<{ t: string; d: unknown }>;
}

/** One dispatch as the user side made it: how often it reached a socket. */
export interface EventRecord {
  t: string;
  key: string;
  sent: number;
  sentAt?: number;
}

interface Logged {
  s: number;
  t: string;
  d: unknown;
  record?: EventRecord;
}

export interface Session {
  id: string;
  intents: number;
  seq: number;
  log: Logged[];
  socket?: WebSocket;
  /** Closed with 1000/1001, invalidated or revoked: it cannot be resumed. */
  ended: boolean;
}

interface Connection {
  ws: WebSocket;
  path: string;
  session?: Session;
}

export class Gateway {
  identifies = 0;
  resumes = 0;
  readonly sessions: Session[] = [];
  /** Every socket opened, with the path it used (`/resume` for the resume URL). */
  readonly connections: Array<{ path: string; at: number }> = [];
  /** When false, heartbeats go unanswered (a zombie connection to the client). */
  ackHeartbeats = true;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly open = new Set<Connection>();

  constructor(private readonly host: GatewayHost) {}

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? "/", "http://x");
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, url));
  }

  private accept(ws: WebSocket, url: URL): void {
    const conn: Connection = { ws, path: url.pathname };
    this.connections.push({ path: url.pathname, at: Date.now() });
    this.open.add(conn);
    ws.on("close", (code) => this.closed(conn, code));
    ws.on("error", () => {});
    if (url.searchParams.get("v") !== "10") return void ws.close(4012, "Invalid API version");
    if ((url.searchParams.get("encoding") ?? "json") !== "json") return void ws.close(4002, "Error while decoding payload.");
    ws.on("message", (raw) => this.receive(conn, String(raw)));
    this.send(conn, { op: 10, d: { heartbeat_interval: this.host.heartbeatIntervalMs } });
  }

  private closed(conn: Connection, code: number): void {
    this.open.delete(conn);
    const session = conn.session;
    if (!session || session.socket !== conn.ws) return;
    session.socket = undefined;
    // A clean close ends the session; anything else (1006, 4200, ...) leaves it resumable.
    if (code === 1000 || code === 1001) session.ended = true;
  }

  private receive(conn: Connection, raw: string): void {
    let payload: { op?: number; d?: Record<string, unknown> };
    try {
      payload = JSON.parse(raw);
    } catch {
      return void conn.ws.close(4002, "Error while decoding payload.");
    }
    switch (payload.op) {
      case 1:
        if (this.ackHeartbeats) this.send(conn, { op: 11 });
        return;
      case 2:
        this.identify(conn, payload.d ?? {});
        return;
      case 6:
        this.resume(conn, payload.d ?? {});
        return;
      case 3:
      case 4:
      case 8:
        if (!conn.session) conn.ws.close(4003, "Not authenticated.");
        return;
      default:
        conn.ws.close(4001, "Unknown opcode.");
    }
  }

  private tokenOk(token: unknown): boolean {
    return typeof token === "string" && token.replace(/^Bot\s+/i, "") === this.host.token && !this.host.revoked;
  }

  private identify(conn: Connection, d: Record<string, unknown>): void {
    if (conn.session) return void conn.ws.close(4005, "Already authenticated.");
    if (!this.tokenOk(d.token)) return void conn.ws.close(4004, "Authentication failed.");
    const intents = d.intents;
    if (typeof intents !== "number" || !Number.isInteger(intents) || intents < 0)
      return void conn.ws.close(4013, "Invalid intent(s).");
    if (!this.host.privilegedIntents && (intents & PRIVILEGED) !== 0) return void conn.ws.close(4014, "Disallowed intent(s).");
    this.identifies++;
    const session: Session = { id: snowflake().slice(-12), intents, seq: 0, log: [], socket: conn.ws, ended: false };
    this.sessions.push(session);
    conn.session = session;
    const ready = { ...this.host.ready(), session_id: session.id, resume_gateway_url: this.host.resumeUrl };
    this.push(session, "READY", ready);
    for (const e of this.host.afterReady(intents)) this.push(session, e.t, e.d);
  }

  private resume(conn: Connection, d: Record<string, unknown>): void {
    if (!this.tokenOk(d.token)) return void conn.ws.close(4004, "Authentication failed.");
    const session = this.sessions.find((s) => s.id === d.session_id && !s.ended);
    if (!session || typeof d.seq !== "number" || d.seq > session.seq) {
      // Discord answers a resume it cannot honour with op 9, d: false.
      this.send(conn, { op: 9, d: false });
      return;
    }
    if (session.socket && session.socket !== conn.ws) session.socket.close(4009, "Session timed out.");
    this.resumes++;
    session.socket = conn.ws;
    conn.session = session;
    for (const e of session.log.filter((x) => x.s > (d.seq as number))) this.sendLogged(conn, e);
    this.push(session, "RESUMED", {});
  }

  /**
   * Dispatches an event to every live session whose intents let it through: `build` returns the
   * payload for that session, or undefined when the session does not get the event. Sessions
   * without a socket keep it for their resume. Returns the number of sessions that took it.
   */
  dispatch(t: string, build: (intents: number) => unknown, record?: EventRecord): number {
    let taken = 0;
    for (const session of this.sessions) {
      if (session.ended) continue;
      const d = build(session.intents);
      if (d === undefined) continue;
      this.push(session, t, d, record);
      taken++;
    }
    return taken;
  }

  private push(session: Session, t: string, d: unknown, record?: EventRecord): void {
    const entry: Logged = { s: ++session.seq, t, d, ...(record ? { record } : {}) };
    session.log.push(entry);
    const conn = [...this.open].find((c) => c.ws === session.socket);
    if (conn) this.sendLogged(conn, entry);
  }

  private sendLogged(conn: Connection, e: Logged): void {
    this.send(conn, { op: 0, t: e.t, s: e.s, d: e.d });
    if (e.record) {
      e.record.sent++;
      e.record.sentAt = Date.now();
    }
  }

  private send(conn: Connection, payload: unknown): void {
    if (conn.ws.readyState === conn.ws.OPEN) conn.ws.send(JSON.stringify(payload));
  }

  /** Sessions with a socket now. */
  get connected(): number {
    return this.sessions.filter((s) => !s.ended && s.socket).length;
  }

  // ---- faults ----

  /** Cuts every socket without a close frame: the client sees 1006 and resumes. */
  dropConnection(): void {
    for (const c of this.open) c.ws.terminate();
  }

  /** Op 7: the client should reconnect and resume. */
  requestReconnect(): void {
    for (const c of this.open) if (c.session) this.send(c, { op: 7, d: null });
  }

  /** Op 9: with `resumable` false the session is gone and the client must identify afresh. */
  invalidSession(resumable: boolean): void {
    for (const c of this.open) {
      if (!c.session) continue;
      if (!resumable) {
        c.session.ended = true;
        c.session.socket = undefined;
        c.session = undefined;
      }
      this.send(c, { op: 9, d: resumable });
    }
  }

  /** The token was reset: every session ends with 4004. */
  revoke(): void {
    for (const s of this.sessions) s.ended = true;
    for (const c of this.open) c.ws.close(4004, "Authentication failed.");
  }

  close(): void {
    for (const c of this.open) c.ws.terminate();
    this.open.clear();
    this.wss.close();
  }
}
