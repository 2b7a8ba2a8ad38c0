/**
 * Replica coordination on PostgreSQL: which gateway processes are alive, which one runs each
 * exclusive channel, which one runs each conversation, and broadcasts between them. One
 * `Cluster` per process, opened on a pool of the shared database (see README.md).
 */
import type pg from "pg";
import { migrate } from "../storage/postgres.js";
import { Broadcaster } from "./broadcast.js";
import { ConversationLeases } from "./conversations.js";
import { ClusterError } from "./errors.js";
import { ChannelLeadership, type LeaseContext } from "./leadership.js";
import { Loop } from "./loop.js";
import { type ResolvedOptions, resolveOptions } from "./options.js";
import { ReplicaRegistry } from "./replicas.js";
import { SCHEMA_NAME, STEPS } from "./schema.js";
import type { BroadcastHandler, ClusterOptions, Leadership, LeadershipListener, LeasedWork, ReplicaInfo } from "./types.js";

export { MAX_PAYLOAD_BYTES } from "./broadcast.js";
export { ClusterError, type ClusterErrorCode } from "./errors.js";
export type * from "./types.js";

/** Topics the cluster sends itself; a user topic may not start with this. */
const INTERNAL = "antler.";
const CHANNEL_RELEASED = `${INTERNAL}channel-released`;
const CONVERSATION_RELEASED = `${INTERNAL}conversation-released`;
const REPLICA_LEFT = `${INTERNAL}replica-left`;
const STOP_CONVERSATION = `${INTERNAL}stop-conversation`;

export class Cluster {
  private readonly registry: ReplicaRegistry;
  private readonly broadcaster: Broadcaster;
  private readonly conversations: ConversationLeases;
  private readonly leaderships = new Map<string, ChannelLeadership>();
  private readonly heartbeat: Loop;
  private state: "open" | "closing" | "closed" = "open";

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: ResolvedOptions,
  ) {
    const { replicaId, logger } = options;
    this.registry = new ReplicaRegistry(pool, replicaId, options.adminUrl, options.deadAfterMs);
    this.broadcaster = new Broadcaster(pool, options.notifyChannel, replicaId, logger);
    const ctx: LeaseContext = { pool, replica: replicaId, logger };
    this.conversations = new ConversationLeases(
      ctx,
      { ttlMs: options.conversationTtlMs, renewMs: options.heartbeatMs, pollMs: options.pollMs },
      (tenant, key) => this.announce(CONVERSATION_RELEASED, { tenant, key }),
    );
    this.heartbeat = new Loop(
      async () => {
        await this.registry.heartbeat();
        await this.broadcaster.check();
      },
      options.heartbeatMs,
      (err) => logger.warn({ err, replica: replicaId }, "could not heartbeat"),
    );
  }

  /**
   * Creates the cluster's tables if needed (safe when several replicas start at once), registers
   * this replica, starts listening for broadcasts and heartbeating. `pool` stays the caller's:
   * `close()` does not end it.
   */
  static async open(pool: pg.Pool, options: ClusterOptions = {}): Promise<Cluster> {
    const cluster = new Cluster(pool, resolveOptions(options));
    await migrate(pool, SCHEMA_NAME, STEPS);
    await cluster.registry.register();
    try {
      await cluster.broadcaster.start();
    } catch (err) {
      await cluster.registry.unregister().catch(() => undefined);
      throw err;
    }
    cluster.listenInternally();
    cluster.heartbeat.start();
    cluster.options.logger.info({ replica: cluster.id }, "replica registered in the cluster");
    return cluster;
  }

  /** This replica's id. */
  get id(): string {
    return this.options.replicaId;
  }

  /** Live replicas (heartbeat within `deadAfterMs`, database clock), with the channels each leads. */
  replicas(): Promise<ReplicaInfo[]> {
    return this.registry.live();
  }

  /** Ids of registered replicas whose heartbeat stopped: their unfinished work is up for taking over. */
  deadReplicas(): Promise<string[]> {
    return this.registry.dead();
  }

  /** Deletes a dead replica's row after its work was taken over; false if it is alive again. */
  forgetReplica(id: string): Promise<boolean> {
    return this.registry.forget(id);
  }

  /**
   * Competes for `channel`'s leadership until resigned or closed. `onChange(true)` when this
   * replica starts leading it, `onChange(false)` when it stops (the lease was taken, or could
   * not be renewed before it would have run out): the channel's connection must stop then.
   */
  lead(channel: string, onChange: LeadershipListener): Leadership {
    if (this.state !== "open") throw closedError();
    if (this.leaderships.has(channel)) throw new ClusterError("cluster_usage", `this replica already competes for ${channel}`);
    const timings = { ttlMs: this.options.leaderTtlMs, everyMs: this.options.heartbeatMs };
    const leadership = new ChannelLeadership(this.leaseContext(), channel, onChange, timings, (released) => {
      if (this.leaderships.get(channel) === leadership) this.leaderships.delete(channel);
      if (released) void this.announce(CHANNEL_RELEASED, { channel });
    });
    this.leaderships.set(channel, leadership);
    leadership.start();
    return leadership;
  }

  /** The replica holding `channel`'s lease now, or null when none does (database view). */
  async leaderOf(channel: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ replica: string }>(
      "SELECT replica FROM antler_cluster_channel_leases WHERE channel = $1 AND expires_at > now()",
      [channel],
    );
    return rows[0]?.replica ?? null;
  }

  /** Every channel with a live lease, and the replica holding it. */
  async leaders(): Promise<Map<string, string>> {
    const { rows } = await this.pool.query<{ channel: string; replica: string }>(
      "SELECT channel, replica FROM antler_cluster_channel_leases WHERE expires_at > now() ORDER BY channel",
    );
    return new Map(rows.map((r) => [r.channel, r.replica]));
  }

  /**
   * Runs `work` while this replica holds the conversation's lease: waits while another live
   * replica holds it (an expired lease is free), renews it while `work` runs, releases it after,
   * also when `work` throws. Calls for one conversation in this process run one after another.
   * `signal` ends the wait (not the work, which gets its own signal for a lost lease).
   */
  withConversation<T>(tenant: string, key: string, work: LeasedWork<T>, signal?: AbortSignal): Promise<T> {
    if (this.state !== "open") return Promise.reject(closedError());
    return this.conversations.run(tenant, key, work, signal);
  }

  /** Whether another replica holds the conversation's lease now (it runs a message there). */
  heldElsewhere(tenant: string, key: string): Promise<boolean> {
    return this.conversations.heldElsewhere(tenant, key);
  }

  /** Asks the other replicas to stop the conversation's running reply (see `onStopConversation`). */
  stopElsewhere(tenant: string, key: string): Promise<void> {
    return this.broadcaster.send(STOP_CONVERSATION, { tenant, key });
  }

  /** Calls `handler` when another replica asks to stop a conversation's reply. */
  onStopConversation(handler: (tenant: string, key: string) => void): () => void {
    return this.on(STOP_CONVERSATION, (payload) => {
      const { tenant, key } = payload as { tenant: string; key: string };
      handler(tenant, key);
    });
  }

  /** Sends `payload` (JSON, at most MAX_PAYLOAD_BYTES) to every other live replica. */
  broadcast(topic: string, payload: unknown): Promise<void> {
    if (this.state !== "open") return Promise.reject(closedError());
    if (topic.startsWith(INTERNAL)) {
      return Promise.reject(new ClusterError("cluster_usage", `topics starting ${INTERNAL} are the cluster's own`));
    }
    return this.broadcaster.send(topic, payload);
  }

  /** Calls `handler` for each broadcast another replica sends on `topic`; returns the unsubscribe. */
  on(topic: string, handler: BroadcastHandler): () => void {
    return this.broadcaster.on(topic, (payload, from) => {
      if (from !== this.id) handler(payload, from);
    });
  }

  /**
   * Leaves gracefully: stops every loop, tells each led channel's listener `false`, then deletes
   * this replica's row and all its leases at once and says so, so others take over without
   * waiting for anything to expire. The pool stays open.
   */
  async close(): Promise<void> {
    if (this.state !== "open") return;
    this.state = "closing";
    await Promise.all([...this.leaderships.values()].map((l) => l.resign()));
    this.conversations.stop("the replica is closing");
    await this.heartbeat.stop();
    try {
      await this.registry.unregister();
      await this.announce(REPLICA_LEFT, {});
    } catch (err) {
      this.options.logger.warn({ err, replica: this.id }, "could not unregister; the others take over once its leases run out");
    }
    await this.broadcaster.close(true);
    this.state = "closed";
    this.options.logger.info({ replica: this.id }, "replica left the cluster");
  }

  /**
   * Stops every loop and timer and releases nothing, without telling any listener: what a
   * killed process leaves behind. For tests; the rows stay until they expire.
   */
  async halt(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    for (const leadership of this.leaderships.values()) leadership.halt();
    this.conversations.stop();
    void this.heartbeat.stop();
    await this.broadcaster.close(false);
  }

  private leaseContext(): LeaseContext {
    return { pool: this.pool, replica: this.id, logger: this.options.logger };
  }

  private listenInternally(): void {
    this.broadcaster.on(CHANNEL_RELEASED, (payload) => {
      this.leaderships.get((payload as { channel: string }).channel)?.poke();
    });
    this.broadcaster.on(CONVERSATION_RELEASED, (payload) => {
      const { tenant, key } = payload as { tenant: string; key: string };
      this.conversations.wake(tenant, key);
    });
    this.broadcaster.on(REPLICA_LEFT, (_payload, from) => {
      if (from === this.id) return;
      for (const leadership of this.leaderships.values()) leadership.poke();
      this.conversations.wakeAll();
    });
  }

  /** Sends an internal hint; losing one only means waiting for the next poll. */
  private async announce(topic: string, payload: unknown): Promise<void> {
    await this.broadcaster.send(topic, payload).catch((err) => this.options.logger.debug({ err, topic }, "could not announce"));
  }
}

function closedError(): ClusterError {
  return new ClusterError("cluster_closed", "the cluster is closed");
}
