/**
 * Broadcast between replicas over LISTEN/NOTIFY. One connection, taken from the pool and kept,
 * listens; sending uses any pooled connection. The listening connection is checked every tick
 * (a silently dropped socket would otherwise deliver nothing, forever) and opened again when it
 * fails. Notifications sent while it is down are lost: a broadcast is a hint to act sooner,
 * never the only way a replica learns something.
 */
import type pg from "pg";
import type { Logger } from "../log/logger.js";
import { ClusterError } from "./errors.js";
import type { BroadcastHandler } from "./types.js";

/** NOTIFY refuses payloads of 8000 bytes or more; this leaves room for the envelope. */
export const MAX_PAYLOAD_BYTES = 7_168;

interface Envelope {
  topic: string;
  from: string;
  /** The sender's schema: deployments side by side in one database (other search paths) never hear each other. */
  scope: string;
  payload: unknown;
}

export class Broadcaster {
  private client: pg.PoolClient | undefined;
  private readonly handlers = new Map<string, Set<BroadcastHandler>>();
  private reconnect: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;
  private scope = "";

  constructor(
    private readonly pool: pg.Pool,
    private readonly channel: string,
    private readonly replica: string,
    private readonly logger: Logger,
  ) {}

  /** Opens the listening connection; the first failure is the caller's, later ones are retried. */
  async start(): Promise<void> {
    const client = await this.pool.connect();
    try {
      client.on("notification", (msg) => this.deliver(msg.channel, msg.payload));
      client.on("error", (err) => this.dropped(client, err));
      const { rows } = await client.query<{ scope: string }>("SELECT current_schema() AS scope");
      this.scope = rows[0]?.scope ?? "";
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      client.release(true);
      throw err;
    }
    if (this.closed) {
      client.release(true);
      return;
    }
    this.client = client;
  }

  /** Sends `payload` (JSON) to every replica listening, this one included. */
  async send(topic: string, payload: unknown): Promise<void> {
    const text = JSON.stringify({ topic, from: this.replica, scope: this.scope, payload } satisfies Envelope);
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_PAYLOAD_BYTES) {
      throw new ClusterError(
        "broadcast_too_large",
        `a broadcast on ${topic} is ${bytes} bytes as JSON; at most ${MAX_PAYLOAD_BYTES} fit in a notification`,
      );
    }
    await this.pool.query("SELECT pg_notify($1, $2)", [this.channel, text]);
  }

  /** Calls `handler` for each broadcast on `topic`; returns the function that stops it. */
  on(topic: string, handler: BroadcastHandler): () => void {
    const set = this.handlers.get(topic) ?? new Set();
    this.handlers.set(topic, set.add(handler));
    return () => set.delete(handler);
  }

  /** Checks the listening connection (or opens it again); run on every heartbeat. */
  async check(): Promise<void> {
    const client = this.client;
    if (!client || this.closed) return;
    try {
      await client.query("SELECT 1");
    } catch (err) {
      this.dropped(client, err);
    }
  }

  /** Stops listening; with `graceful`, says UNLISTEN first so the connection can be reused. */
  async close(graceful: boolean): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnect);
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    if (graceful) await client.query(`UNLISTEN ${this.channel}`).catch(() => undefined);
    // Destroyed, not returned: a connection that listened never goes back to the pool.
    client.release(true);
  }

  private deliver(channel: string, text: string | undefined): void {
    if (channel !== this.channel || text === undefined) return;
    let envelope: Envelope;
    try {
      envelope = JSON.parse(text) as Envelope;
    } catch {
      this.logger.warn({ channel }, "ignored a notification that is not JSON");
      return;
    }
    if (envelope.scope !== this.scope) return;
    for (const handler of this.handlers.get(envelope.topic) ?? []) {
      try {
        handler(envelope.payload, envelope.from);
      } catch (err) {
        this.logger.error({ err, topic: envelope.topic }, "a broadcast handler failed");
      }
    }
  }

  private dropped(client: pg.PoolClient, err: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.release(true);
    if (this.closed) return;
    this.logger.warn({ err }, "the broadcast connection dropped; opening it again");
    this.retry();
  }

  private retry(): void {
    const wait = Math.min(5_000, 250 * 2 ** this.failures);
    this.reconnect = setTimeout(() => {
      this.start()
        .then(() => {
          this.failures = 0;
          this.logger.info("the broadcast connection is back");
        })
        .catch((err) => {
          this.failures++;
          this.logger.warn({ err, failures: this.failures }, "could not open the broadcast connection");
          if (!this.closed) this.retry();
        });
    }, wait);
    this.reconnect.unref();
  }
}
