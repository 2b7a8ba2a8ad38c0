/**
 * How gateway replicas that share one PostgreSQL database agree on who does what:
 *
 * - **Replicas.** Each process has a row it refreshes every heartbeat; one whose row is older than
 *   `deadAfterMs` (or that said goodbye) is dead, and the others take over its unfinished work.
 *   The timings follow one rule (timing.ts).
 * - **Channel leaders.** A channel with one connection per bot (Telegram polling, a socket) runs on
 *   the replica holding its lease. The leader renews it every heartbeat; when it dies the lease
 *   runs out and another replica takes it, within `leaseMs` plus one heartbeat.
 * - **Conversation leases.** One replica at a time runs a conversation's messages, so they run in
 *   order whichever replica received them.
 * - **Broadcasts.** LISTEN/NOTIFY carries small messages to every other replica (`/stop`, which
 *   is also stored so it survives a listening connection that was down: stop-requests.ts).
 *
 * Every time comparison uses the database's clock (`now()`), so replicas whose clocks disagree
 * still agree on who holds a lease. A leader that cannot renew stops its connection once its lease
 * would have run out, rather than risk two processes polling one bot.
 */
import { hostname } from "node:os";
import pg from "pg";
import type { Logger } from "../log/logger.js";
import { COORDINATOR_POOL_MAX } from "../storage/connections.js";
import { migrate, type PostgresConnection, TENANT_SETTING } from "../storage/postgres.js";
import { STOP_REQUESTS_SCHEMA, STOP_REQUESTS_STEPS } from "./stop-requests-schema.js";
import { type ReplicaTiming, replicaTiming } from "./timing.js";

const CHANNEL = "antler_replicas";
/** The broadcast that says a channel's lease was given up. */
const RELEASED = "channel-released";

const SCHEMA = [
  `CREATE TABLE antler_replicas (
    id text PRIMARY KEY,
    host text NOT NULL,
    pid integer NOT NULL,
    url text,
    started_at timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    stopped_at timestamptz)`,
  `CREATE TABLE antler_channel_leases (
    channel text PRIMARY KEY,
    replica text NOT NULL,
    since timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL)`,
  `CREATE TABLE antler_conversation_leases (
    tenant text NOT NULL,
    key text NOT NULL,
    replica text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, key))`,
  "CREATE INDEX antler_conversation_leases_replica ON antler_conversation_leases (replica)",
];

export interface CoordinatorOptions {
  connection: PostgresConnection;
  /** This replica's id; unique per process. */
  id: string;
  /** Where this replica's admin API answers, for `/api/replicas`. */
  url?: string;
  logger: Logger;
  /** How long a lease lasts without renewal (default 5 s); the other timings follow from it (timing.ts). */
  leaseMs?: number;
  /** For tests: a heartbeat shorter than the rule's. */
  heartbeatMs?: number;
}

/** One live replica, as `/api/replicas` shows it. */
export interface ReplicaInfo {
  id: string;
  host: string;
  pid: number;
  url: string | null;
  started_at: string;
  heartbeat_at: string;
  /** Channels it leads now. */
  leads: string[];
}

type Handler = (data: unknown, from: string) => void;

export class Coordinator {
  readonly id: string;
  readonly timing: ReplicaTiming;
  /** How often the replica row and its leases are renewed. */
  readonly heartbeatMs: number;
  private readonly leaseMs: number;
  private readonly deadAfterMs: number;
  private timer: NodeJS.Timeout | undefined;
  private guard: NodeJS.Timeout | undefined;
  private listener: pg.Client | undefined;
  private closed = false;
  /** Channels this replica wants to lead, with what to tell when it gains or loses one. */
  private readonly candidates = new Map<string, (leading: boolean) => void>();
  /** Channels it leads, and until when (local clock) its last renewal holds. */
  private readonly leading = new Map<string, number>();
  /** The leader of each channel, as last read. */
  private readonly leaders = new Map<string, string | null>();
  private readonly handlers = new Map<string, Handler[]>();
  /** Told each time the broadcast connection is back after a drop (broadcasts sent meanwhile were missed). */
  private readonly relistened: Array<() => void> = [];
  /**
   * Conversation leases held now: when the last renewal holds until (local clock), and the signal
   * that tells the work its lease is gone.
   */
  private readonly held = new Map<string, { acquired: number; until: number; lost: AbortController }>();
  /** Conversations this process works on, so two local works on one key never run at once. */
  private readonly local = new Map<string, Promise<unknown>>();
  private tick: Promise<void> = Promise.resolve();
  /** The schema the tables are in: broadcasts of deployments in other schemas of the database are not ours. */
  private scope = "";

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: CoordinatorOptions,
  ) {
    this.id = options.id;
    this.timing = replicaTiming(options);
    this.heartbeatMs = this.timing.heartbeatMs;
    this.leaseMs = this.timing.leaseMs;
    this.deadAfterMs = this.timing.deadAfterMs;
  }

  /** Creates the tables (safe when several replicas start at once), registers this replica and starts its heartbeat. */
  static async open(options: CoordinatorOptions): Promise<Coordinator> {
    const { heartbeatMs } = replicaTiming(options);
    // Heartbeats and leases are small, quick statements: a few connections serve them, and one
    // that hangs (a silent network) is given up well within a lease, so the next beat can try.
    const pool = new pg.Pool({
      connectionString: options.connection.url,
      max: Math.min(options.connection.poolSize ?? COORDINATOR_POOL_MAX, COORDINATOR_POOL_MAX),
      idleTimeoutMillis: 10_000,
      connectionTimeoutMillis: heartbeatMs * 2,
      query_timeout: heartbeatMs * 2,
    });
    pool.on("error", () => undefined);
    try {
      await migrate(pool, "replicas", SCHEMA);
      await migrate(pool, STOP_REQUESTS_SCHEMA, STOP_REQUESTS_STEPS);
      const coordinator = new Coordinator(pool, options);
      await coordinator.register();
      await coordinator.listen();
      // A channel another replica gave up is competed for at once, not at the next heartbeat.
      coordinator.on(RELEASED, (data) => coordinator.contendNow((data as { channel?: unknown }).channel));
      coordinator.timer = setInterval(() => {
        coordinator.stepDownIfExpired();
        coordinator.tick = coordinator.tick.then(() => coordinator.beat());
      }, coordinator.heartbeatMs);
      coordinator.timer.unref();
      // Checked on its own timer: a beat stuck on a silent network must not keep a lapsed leader running.
      coordinator.guard = setInterval(() => coordinator.stepDownIfExpired(), Math.min(250, coordinator.heartbeatMs / 2));
      coordinator.guard.unref();
      return coordinator;
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
  }

  private async register(): Promise<void> {
    const { rows } = await this.pool.query<{ schema: string }>("SELECT current_schema() AS schema");
    this.scope = rows[0]?.schema ?? "";
    await this.pool.query(
      `INSERT INTO antler_replicas (id, host, pid, url) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), stopped_at = NULL, url = EXCLUDED.url`,
      [this.id, hostname(), process.pid, this.options.url ?? null],
    );
  }

  /** One heartbeat: the replica row, the conversation leases held, and every channel lease wanted. */
  private async beat(): Promise<void> {
    if (this.closed) return;
    const asked = Date.now();
    try {
      await this.pool.query("UPDATE antler_replicas SET heartbeat_at = now(), stopped_at = NULL WHERE id = $1", [this.id]);
      const { rows } = await this.pool.query<{ tenant: string; key: string }>(
        `UPDATE antler_conversation_leases SET expires_at = now() + $2 * interval '1 millisecond'
         WHERE replica = $1 RETURNING tenant, key`,
        [this.id, this.leaseMs],
      );
      const renewed = new Set(rows.map((r) => `${r.tenant}\u0000${r.key}`));
      for (const [slot, held] of this.held) {
        // Counted from before the request, and a little early, like a channel's lease.
        if (renewed.has(slot)) held.until = asked + this.leaseMs - this.heartbeatMs / 2;
        else if (held.acquired < asked) held.lost.abort(); // another replica has it now
      }
    } catch (err) {
      this.options.logger.warn({ err }, "replica heartbeat failed");
    }
    // Not renewed in time (the database is unreachable): the lease may be another replica's now.
    for (const held of this.held.values()) if (Date.now() >= held.until) held.lost.abort();
    for (const channel of this.candidates.keys()) await this.contend(channel);
  }

  /** Takes or renews the channel's lease, and tells when leadership changed. */
  private async contend(channel: string): Promise<void> {
    const asked = Date.now();
    let holder: string | null | undefined;
    try {
      const { rows } = await this.pool.query<{ replica: string }>(
        `INSERT INTO antler_channel_leases (channel, replica, expires_at)
           VALUES ($1, $2, now() + $3 * interval '1 millisecond')
         ON CONFLICT (channel) DO UPDATE SET
           replica = EXCLUDED.replica,
           expires_at = EXCLUDED.expires_at,
           since = CASE WHEN antler_channel_leases.replica = EXCLUDED.replica THEN antler_channel_leases.since ELSE now() END
         WHERE antler_channel_leases.replica = EXCLUDED.replica OR antler_channel_leases.expires_at < now()
         RETURNING replica`,
        [channel, this.id, this.leaseMs],
      );
      if (rows.length > 0) holder = this.id;
      else holder = await this.leaderOf(channel);
    } catch (err) {
      this.options.logger.warn({ err, channel }, "could not renew a channel lease");
    }
    if (this.closed || !this.candidates.has(channel)) return;
    if (holder === this.id) {
      // The lease counts from before the request: the database may have granted it a moment later.
      const had = this.leading.has(channel);
      this.leading.set(channel, asked + this.leaseMs - this.heartbeatMs / 2);
      this.leaders.set(channel, this.id);
      if (!had) this.tell(channel, true);
      return;
    }
    if (holder !== undefined) this.leaders.set(channel, holder);
    const until = this.leading.get(channel);
    // Taken by another replica, or not renewed in time: stop before two processes run the bot.
    if (until !== undefined && (holder !== undefined || Date.now() >= until)) {
      this.leading.delete(channel);
      this.tell(channel, false);
    }
  }

  /** Gives up every channel and conversation whose last renewal has run out, whatever the database is doing. */
  private stepDownIfExpired(): void {
    const now = Date.now();
    for (const held of this.held.values()) if (now >= held.until) held.lost.abort();
    for (const [channel, until] of this.leading) {
      if (now < until) continue;
      this.leading.delete(channel);
      this.tell(channel, false);
    }
  }

  private tell(channel: string, leading: boolean): void {
    this.options.logger.info(
      { channel, replica: this.id },
      leading ? "this replica now runs the channel" : "this replica no longer runs the channel",
    );
    try {
      this.candidates.get(channel)?.(leading);
    } catch (err) {
      this.options.logger.error({ err, channel }, "leadership change handler failed");
    }
  }

  /**
   * Competes for the channel's lease from now on: `onChange(true)` when this replica becomes its
   * leader, `onChange(false)` when it stops being one. The first attempt is made at once.
   */
  async lead(channel: string, onChange: (leading: boolean) => void): Promise<void> {
    this.candidates.set(channel, onChange);
    await this.contend(channel);
  }

  /**
   * Stops competing for the channel and gives its lease up at once; the other replicas are told,
   * and compete for it without waiting for their next heartbeat. The caller has stopped the
   * channel's connection first (nothing tells the caller's `onChange`).
   */
  async resign(channel: string): Promise<void> {
    this.candidates.delete(channel);
    const led = this.leading.delete(channel);
    try {
      await this.pool.query("DELETE FROM antler_channel_leases WHERE channel = $1 AND replica = $2", [channel, this.id]);
      if (led) await this.broadcast(RELEASED, { channel });
    } catch (err) {
      this.options.logger.warn({ err, channel }, "could not give up a channel lease");
    }
  }

  /** Competes for a channel another replica just gave up, if this one wants it. */
  private contendNow(channel: unknown): void {
    if (this.closed || typeof channel !== "string" || !this.candidates.has(channel)) return;
    this.tick = this.tick.then(() => this.contend(channel));
  }

  /** Whether this replica leads the channel now. */
  leads(channel: string): boolean {
    return this.leading.has(channel);
  }

  /** The replica whose lease on the channel has not run out, if any (read now). */
  async leaderOf(channel: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ replica: string }>(
      "SELECT replica FROM antler_channel_leases WHERE channel = $1 AND expires_at > now()",
      [channel],
    );
    return rows[0]?.replica ?? null;
  }

  /** The leader of each channel as this replica last saw it (for status; no query). */
  knownLeader(channel: string): string | null | undefined {
    return this.leaders.get(channel);
  }

  /**
   * Runs `work` while this replica holds the conversation's lease: waits while another replica
   * holds it, keeps it renewed with the heartbeat, and gives it up when `work` ends. `lost` aborts
   * when the lease could not be renewed in time or another replica took it: the work should then
   * start nothing new in the conversation.
   */
  withConversation<T>(tenant: string, key: string, work: (lost: AbortSignal) => Promise<T>): Promise<T> {
    const slot = `${tenant}\u0000${key}`;
    const prior = this.local.get(slot) ?? Promise.resolve();
    const run = prior
      .catch(() => undefined)
      .then(async () => {
        const acquired = await this.acquire(tenant, key);
        const held = { acquired, until: acquired + this.leaseMs - this.heartbeatMs / 2, lost: new AbortController() };
        this.held.set(slot, held);
        try {
          return await work(held.lost.signal);
        } finally {
          this.held.delete(slot);
          await this.pool
            .query("DELETE FROM antler_conversation_leases WHERE tenant = $1 AND key = $2 AND replica = $3", [
              tenant,
              key,
              this.id,
            ])
            .catch((err: unknown) => this.options.logger.warn({ err, key }, "could not give up a conversation lease"));
          await this.broadcast("free", { tenant, key }).catch(() => undefined);
        }
      });
    this.local.set(slot, run);
    // The caller handles a failure; this copy of it must not end the process as an unhandled rejection.
    void run
      .finally(() => {
        if (this.local.get(slot) === run) this.local.delete(slot);
      })
      .catch(() => undefined);
    return run;
  }

  /** Waits for the conversation's lease; resolves to when (local clock) the winning request was sent. */
  private async acquire(tenant: string, key: string): Promise<number> {
    for (let wait = 50; ; wait = Math.min(500, wait * 2)) {
      if (this.closed) throw new Error("the replica is shutting down");
      const asked = Date.now();
      const { rows } = await this.pool.query(
        `INSERT INTO antler_conversation_leases (tenant, key, replica, expires_at)
           VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
         ON CONFLICT (tenant, key) DO UPDATE SET replica = EXCLUDED.replica, expires_at = EXCLUDED.expires_at
         WHERE antler_conversation_leases.expires_at < now() OR antler_conversation_leases.replica = EXCLUDED.replica
         RETURNING replica`,
        [tenant, key, this.id, this.leaseMs],
      );
      if (rows.length > 0) return asked;
      // Woken early when the holder says it is done; else tried again after a growing wait.
      await this.until("free", (data) => (data as { key?: string }).key === key, wait);
    }
  }

  /** Whether another live replica holds the conversation's lease now. */
  async heldElsewhere(tenant: string, key: string): Promise<boolean> {
    const { rows } = await this.pool.query(
      "SELECT 1 FROM antler_conversation_leases WHERE tenant = $1 AND key = $2 AND replica <> $3 AND expires_at > now()",
      [tenant, key, this.id],
    );
    return rows.length > 0;
  }

  /** The live replicas, oldest first, with the channels each leads. */
  async replicas(): Promise<ReplicaInfo[]> {
    const { rows } = await this.pool.query<{
      id: string;
      host: string;
      pid: number;
      url: string | null;
      started_at: Date;
      heartbeat_at: Date;
      leads: string[] | null;
    }>(
      `SELECT r.id, r.host, r.pid, r.url, r.started_at, r.heartbeat_at,
         array_remove(array_agg(l.channel ORDER BY l.channel), NULL) AS leads
       FROM antler_replicas r
       LEFT JOIN antler_channel_leases l ON l.replica = r.id AND l.expires_at > now()
       WHERE r.stopped_at IS NULL AND r.heartbeat_at > now() - $1 * interval '1 millisecond'
       GROUP BY r.id ORDER BY r.started_at, r.id`,
      [this.deadAfterMs],
    );
    return rows.map((r) => ({
      id: r.id,
      host: r.host,
      pid: r.pid,
      url: r.url,
      started_at: r.started_at.toISOString(),
      heartbeat_at: r.heartbeat_at.toISOString(),
      leads: r.leads ?? [],
    }));
  }

  /** Ids of the live replicas (this one included). */
  async liveIds(): Promise<Set<string>> {
    return new Set((await this.replicas()).map((r) => r.id));
  }

  /** Sends `data` to every other replica's `on(topic)` handlers. */
  async broadcast(topic: string, data: unknown): Promise<void> {
    await this.pool.query("SELECT pg_notify($1, $2)", [
      CHANNEL,
      JSON.stringify({ scope: this.scope, from: this.id, topic, data }),
    ]);
  }

  /** Runs `handler` for every broadcast of `topic` from another replica. */
  on(topic: string, handler: Handler): () => void {
    const list = this.handlers.get(topic) ?? [];
    list.push(handler);
    this.handlers.set(topic, list);
    return () => {
      const at = list.indexOf(handler);
      if (at >= 0) list.splice(at, 1);
    };
  }

  /** Resolves on the first broadcast of `topic` that `match` accepts, or after `ms`. */
  private until(topic: string, match: (data: unknown) => boolean, ms: number): Promise<void> {
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

  /** One connection that LISTENs for broadcasts; it reconnects when it drops. */
  private async listen(): Promise<void> {
    if (this.closed) return;
    // A connection of its own, outside the pool: LISTEN belongs to its session.
    const listener = new pg.Client(this.pool.options);
    listener.on("notification", (message) => {
      if (message.channel !== CHANNEL || !message.payload) return;
      let parsed: { scope?: string; from?: string; topic?: string; data?: unknown };
      try {
        parsed = JSON.parse(message.payload) as typeof parsed;
      } catch {
        return;
      }
      if (parsed.scope !== this.scope || parsed.from === this.id || !parsed.topic) return;
      for (const handler of [...(this.handlers.get(parsed.topic) ?? [])]) handler(parsed.data, parsed.from ?? "");
    });
    // Only the connection in use reconnects; one that fails while connecting is retried below.
    listener.on("error", (err) => {
      if (this.listener !== listener) return;
      this.options.logger.warn({ err }, "the replicas' broadcast connection dropped; reconnecting");
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
    if (this.closed) {
      await listener.end().catch(() => undefined);
      return;
    }
    this.listener = listener;
  }

  /** Connects the broadcast connection again, every second until it is back, then tells `onRelisten`. */
  private relisten(): void {
    const retry = () => {
      if (this.closed) return;
      this.listen().then(
        () => {
          if (this.closed) return;
          for (const handler of [...this.relistened]) handler();
        },
        () => setTimeout(retry, 1_000).unref(),
      );
    };
    setTimeout(retry, 1_000).unref();
  }

  /** Runs `handler` each time the broadcast connection is back after it dropped: broadcasts sent meanwhile were missed. */
  onRelisten(handler: () => void): void {
    this.relistened.push(handler);
  }

  /**
   * Runs `statements` in one round trip and one transaction whose row-level security shows only
   * `tenant`'s rows (for the replicas' tables that carry a tenant, like the stop requests), and
   * resolves to the last statement's rows. Several statements in one query take no parameters:
   * every value in them must be quoted with `pg.escapeLiteral`.
   */
  async asTenant<R extends pg.QueryResultRow>(tenant: string, statements: string): Promise<R[]> {
    // A multi-statement query is one implicit transaction, so the local setting covers it all.
    const setting = `SELECT set_config(${pg.escapeLiteral(TENANT_SETTING)}, ${pg.escapeLiteral(tenant)}, true);`;
    const results = (await this.pool.query(`${setting}\n${statements}`)) as unknown as pg.QueryResult<R>[];
    return results.at(-1)?.rows ?? [];
  }

  /** The tenants of the conversations whose leases this replica holds now. */
  heldTenants(): string[] {
    return [...new Set([...this.held.keys()].map((slot) => slot.slice(0, slot.indexOf("\u0000"))))];
  }

  /** Says goodbye: gives up every lease and marks the replica stopped, so the others take over at once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.guard) clearInterval(this.guard);
    await this.tick.catch(() => undefined);
    this.candidates.clear();
    const led = [...this.leading.keys()];
    this.leading.clear();
    try {
      await this.pool.query("DELETE FROM antler_channel_leases WHERE replica = $1", [this.id]);
      for (const channel of led) await this.broadcast(RELEASED, { channel });
      await this.pool.query("DELETE FROM antler_conversation_leases WHERE replica = $1", [this.id]);
      await this.pool.query("UPDATE antler_replicas SET stopped_at = now() WHERE id = $1", [this.id]);
      await this.pool.query("DELETE FROM antler_replicas WHERE stopped_at < now() - interval '1 day'");
    } catch (err) {
      this.options.logger.warn({ err }, "could not say goodbye to the other replicas");
    }
    await this.listener?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }

  /** For tests: stops every loop and connection without giving anything up, as a killed process would. */
  async halt(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.guard) clearInterval(this.guard);
    await this.listener?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}
