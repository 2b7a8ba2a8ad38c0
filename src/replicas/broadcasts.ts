/**
 * Broadcasts: small messages to every other replica over PostgreSQL's LISTEN/NOTIFY. One
 * connection of its own LISTENs (it reconnects every second after a drop, and tells who asked
 * that broadcasts sent meanwhile were missed); a broadcast carries the schema name, so two
 * deployments in one database never hear each other.
 */
import pg from "pg";
import type { ReplicaContext } from "./context.js";

const CHANNEL = "antler_replicas";

export type BroadcastHandler = (data: unknown, from: string) => void;

export class Broadcasts {
  private listener: pg.Client | undefined;
  private readonly handlers = new Map<string, BroadcastHandler[]>();
  /** Told each time the broadcast connection is back after a drop (broadcasts sent meanwhile were missed). */
  private readonly relistened: Array<() => void> = [];
  /** The schema the tables are in: broadcasts of deployments in other schemas of the database are not ours. */
  private scope = "";

  constructor(private readonly context: ReplicaContext) {}

  /** Starts listening, as a deployment in `scope` (the tables' schema). */
  async open(scope: string): Promise<void> {
    this.scope = scope;
    await this.listen();
  }

  /** Sends `data` to every other replica's `on(topic)` handlers. */
  async broadcast(topic: string, data: unknown): Promise<void> {
    await this.context.pool.query("SELECT pg_notify($1, $2)", [
      CHANNEL,
      JSON.stringify({ scope: this.scope, from: this.context.id, topic, data }),
    ]);
  }

  /** Runs `handler` for every broadcast of `topic` from another replica. */
  on(topic: string, handler: BroadcastHandler): () => void {
    const list = this.handlers.get(topic) ?? [];
    list.push(handler);
    this.handlers.set(topic, list);
    return () => {
      const at = list.indexOf(handler);
      if (at >= 0) list.splice(at, 1);
    };
  }

  /** Resolves on the first broadcast of `topic` that `match` accepts, or after `ms`. */
  until(topic: string, match: (data: unknown) => boolean, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        off();
        resolve();
      };
      const timer = setTimeout(done, ms);
      const off = this.on(topic, (data) => {
        if (match(data)) done();
      });
    });
  }

  /** Runs `handler` each time the broadcast connection is back after it dropped: broadcasts sent meanwhile were missed. */
  onRelisten(handler: () => void): void {
    this.relistened.push(handler);
  }

  /** Ends the listening connection. */
  async close(): Promise<void> {
    await this.listener?.end().catch(() => undefined);
  }

  /** Hands a notification to the handlers of its topic, if it is a broadcast of this deployment from another replica. */
  private deliver(message: pg.Notification): void {
    if (message.channel !== CHANNEL || !message.payload) return;
    let parsed: { scope?: string; from?: string; topic?: string; data?: unknown };
    try {
      parsed = JSON.parse(message.payload) as typeof parsed;
    } catch {
      return;
    }
    if (parsed.scope !== this.scope || parsed.from === this.context.id || !parsed.topic) return;
    for (const handler of [...(this.handlers.get(parsed.topic) ?? [])]) handler(parsed.data, parsed.from ?? "");
  }

  /** One connection that LISTENs for broadcasts; it reconnects when it drops. */
  private async listen(): Promise<void> {
    if (this.context.closed()) return;
    // A connection of its own, outside the pool: LISTEN belongs to its session.
    const listener = new pg.Client(this.context.pool.options);
    listener.on("notification", (message) => this.deliver(message));
    // Only the connection in use reconnects; one that fails while connecting is retried below.
    listener.on("error", (err) => {
      if (this.listener !== listener) return;
      this.context.logger.warn({ err }, "the replicas' broadcast connection dropped; reconnecting");
      this.listener = undefined;
      listener.end().catch(() => undefined);
      this.relisten();
    });
    try {
      await listener.connect();
      await listener.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      listener.end().catch(() => undefined);
      throw err;
    }
    if (this.context.closed()) {
      await listener.end().catch(() => undefined);
      return;
    }
    this.listener = listener;
  }

  /** Connects the broadcast connection again, every second until it is back, then tells `onRelisten`. */
  private relisten(): void {
    const retry = () => {
      if (this.context.closed()) return;
      this.listen().then(
        () => {
          if (this.context.closed()) return;
          for (const handler of [...this.relistened]) handler();
        },
        () => setTimeout(retry, 1_000).unref(),
      );
    };
    setTimeout(retry, 1_000).unref();
  }
}
