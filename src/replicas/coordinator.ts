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
 *
 * `Coordinator` opens the tables and runs the heartbeat; each concern is a part of its own
 * (membership.ts, channel-leases.ts, conversation-leases.ts, broadcasts.ts) and this class is the
 * one face the gateway uses.
 */
import pg from "pg";
import type { Logger } from "../log/logger.js";
import { COORDINATOR_POOL_MAX } from "../storage/connections.js";
import { migrate, type PostgresConnection, TENANT_SETTING } from "../storage/postgres.js";
import { type BroadcastHandler, Broadcasts } from "./broadcasts.js";
import { ChannelLeases } from "./channel-leases.js";
import type { ReplicaContext } from "./context.js";
import { ConversationLeases } from "./conversation-leases.js";
import { Membership, type ReplicaInfo } from "./membership.js";
import { STOP_REQUESTS_SCHEMA, STOP_REQUESTS_STEPS } from "./stop-requests-schema.js";
import { type ReplicaTiming, replicaTiming } from "./timing.js";

export type { ReplicaInfo } from "./membership.js";

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

export class Coordinator {
  readonly id: string;
  readonly timing: ReplicaTiming;
  /** How often the replica row and its leases are renewed. */
  readonly heartbeatMs: number;
  private timer: NodeJS.Timeout | undefined;
  private guard: NodeJS.Timeout | undefined;
  private closed = false;
  private tick: Promise<void> = Promise.resolve();
  private readonly membership: Membership;
  private readonly broadcasts: Broadcasts;
  private readonly channels: ChannelLeases;
  private readonly conversations: ConversationLeases;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: CoordinatorOptions,
  ) {
    this.id = options.id;
    this.timing = replicaTiming(options);
    this.heartbeatMs = this.timing.heartbeatMs;
    const context: ReplicaContext = {
      pool,
      id: this.id,
      timing: this.timing,
      logger: options.logger,
      closed: () => this.closed,
    };
    this.membership = new Membership(context, options.url);
    this.broadcasts = new Broadcasts(context);
    this.channels = new ChannelLeases(context, this.broadcasts, (work) => {
      this.tick = this.tick.then(work);
    });
    this.conversations = new ConversationLeases(context, this.broadcasts);
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
      await coordinator.broadcasts.open(await coordinator.membership.register());
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

  /** One heartbeat: the replica row, the conversation leases held, and every channel lease wanted. */
  private async beat(): Promise<void> {
    if (this.closed) return;
    const asked = Date.now();
    try {
      await this.membership.beat();
      await this.conversations.renew(asked);
    } catch (err) {
      this.options.logger.warn({ err }, "replica heartbeat failed");
    }
    // Not renewed in time (the database is unreachable): the lease may be another replica's now.
    this.conversations.expire(Date.now());
    await this.channels.renewAll();
  }

  /** Gives up every channel and conversation whose last renewal has run out, whatever the database is doing. */
  private stepDownIfExpired(): void {
    const now = Date.now();
    this.conversations.expire(now);
    this.channels.stepDownIfExpired(now);
  }

  /** See {@link ChannelLeases.lead}. */
  lead(channel: string, onChange: (leading: boolean) => void): Promise<void> {
    return this.channels.lead(channel, onChange);
  }

  /** See {@link ChannelLeases.resign}. */
  resign(channel: string): Promise<void> {
    return this.channels.resign(channel);
  }

  /** Whether this replica leads the channel now. */
  leads(channel: string): boolean {
    return this.channels.leads(channel);
  }

  /** The replica whose lease on the channel has not run out, if any (read now). */
  leaderOf(channel: string): Promise<string | null> {
    return this.channels.leaderOf(channel);
  }

  /** The leader of each channel as this replica last saw it (for status; no query). */
  knownLeader(channel: string): string | null | undefined {
    return this.channels.knownLeader(channel);
  }

  /** See {@link ConversationLeases.withConversation}. */
  withConversation<T>(tenant: string, key: string, work: (lost: AbortSignal) => Promise<T>): Promise<T> {
    return this.conversations.withConversation(tenant, key, work);
  }

  /** Whether another live replica holds the conversation's lease now. */
  heldElsewhere(tenant: string, key: string): Promise<boolean> {
    return this.conversations.heldElsewhere(tenant, key);
  }

  /** The tenants of the conversations whose leases this replica holds now. */
  heldTenants(): string[] {
    return this.conversations.heldTenants();
  }

  /** The live replicas, oldest first, with the channels each leads. */
  replicas(): Promise<ReplicaInfo[]> {
    return this.membership.replicas();
  }

  /** Ids of the live replicas (this one included). */
  async liveIds(): Promise<Set<string>> {
    return new Set((await this.replicas()).map((r) => r.id));
  }

  /** Sends `data` to every other replica's `on(topic)` handlers. */
  broadcast(topic: string, data: unknown): Promise<void> {
    return this.broadcasts.broadcast(topic, data);
  }

  /** Runs `handler` for every broadcast of `topic` from another replica. */
  on(topic: string, handler: BroadcastHandler): () => void {
    return this.broadcasts.on(topic, handler);
  }

  /** Runs `handler` each time the broadcast connection is back after it dropped: broadcasts sent meanwhile were missed. */
  onRelisten(handler: () => void): void {
    this.broadcasts.onRelisten(handler);
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

  /** Says goodbye: gives up every lease and marks the replica stopped, so the others take over at once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.guard) clearInterval(this.guard);
    await this.tick.catch(() => undefined);
    try {
      await this.channels.close();
      await this.conversations.close();
      await this.membership.goodbye();
    } catch (err) {
      this.options.logger.warn({ err }, "could not say goodbye to the other replicas");
    }
    await this.broadcasts.close();
    await this.pool.end().catch(() => undefined);
  }

  /** For tests: stops every loop and connection without giving anything up, as a killed process would. */
  async halt(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.guard) clearInterval(this.guard);
    await this.broadcasts.close();
    await this.pool.end().catch(() => undefined);
  }
}
