/**
 * What a gateway does differently when it is one of several replicas on a shared PostgreSQL
 * store (`storage.kind: postgres`):
 *
 * - an exclusive channel (one connection per bot, see `Channel.exclusive`) runs only on the
 *   replica that holds its lease; the others stand by (state `standby`) and one of them starts it
 *   when the leader goes away;
 * - every heartbeat, and as soon as this replica starts running a channel it now leads, the
 *   unfinished messages of replicas that died (or stopped) are taken over, each by exactly one
 *   live replica that runs its channel, and answered as after a restart: run if they never
 *   started, rejoined or given the restart notice if they were running;
 * - a `/stop` reaches the replica that runs the conversation's reply, also when that replica's
 *   listening connection was down (stop-requests.ts).
 */
import type { BindingStore, InboxEntry } from "../bindings/types.js";
import type { ChannelReport, ChannelSlot } from "../channels/registry.js";
import type { Channel } from "../channels/types.js";
import type { Logger } from "../log/logger.js";
import type { Coordinator, ReplicaInfo } from "../replicas/coordinator.js";
import { StopRequests } from "../replicas/stop-requests.js";
import type { Dispatcher, ReplicaCoordinator } from "./dispatcher.js";

/** What the link needs from its gateway. */
export interface ReplicaHost {
  slots(): ChannelSlot[];
  dispatcher(): Dispatcher | undefined;
  /** The store's view of every tenant. */
  views(): BindingStore[];
  /** Starts the slot's channel for real. */
  startSlot(slot: ChannelSlot): Promise<void>;
  /** Builds a fresh instance of the slot's channel and starts it, leaving the old instance alone. */
  renewSlot(slot: ChannelSlot): Promise<void>;
  logger: Logger;
}

export class ReplicaLink {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> = Promise.resolve();
  private closed = false;
  /** Messages taken over whose notice could not be sent yet, by channel: tried again on the next sweep. */
  private readonly unsent = new Map<string, InboxEntry[]>();
  /** Channel instances whose lease was lost: intake stopped, their send path open until the replies here end. */
  private readonly retiring = new Map<Channel, Promise<void>>();
  private readonly stops: StopRequests;

  constructor(
    readonly coordinator: Coordinator,
    private readonly host: ReplicaHost,
  ) {
    this.stops = new StopRequests(coordinator, {
      logger: host.logger,
      apply: (key, madeMsAgo) => void host.dispatcher()?.stopConversation(key, madeMsAgo),
    });
  }

  get id(): string {
    return this.coordinator.id;
  }

  /** What the dispatcher asks of the other replicas. */
  forDispatcher(): ReplicaCoordinator {
    const c = this.coordinator;
    return {
      withConversation: (tenant, key, work) => c.withConversation(tenant, key, work),
      heldElsewhere: (tenant, key) => c.heldElsewhere(tenant, key),
      stopElsewhere: async (tenant, key) => void (await this.stops.send(tenant, key)),
    };
  }

  /** Starts listening to the others and looking for dead replicas' work. */
  start(): void {
    this.stops.start();
    this.timer = setInterval(() => this.sweepSoon(), this.coordinator.timing.sweepMs);
    this.timer.unref();
  }

  /** Looks for dead replicas' work after the sweep under way, if any. */
  private sweepSoon(): void {
    if (this.closed) return;
    this.sweeping = this.sweeping.then(() => this.sweep());
  }

  /**
   * Whether this replica may start the slot's channel now: any shared channel, and an exclusive
   * one only while it holds its lease. A slot it may not start is marked standby.
   */
  mayStart(slot: ChannelSlot): boolean {
    if (!slot.channel?.exclusive || this.coordinator.leads(slot.name)) return true;
    this.standBy(slot);
    return false;
  }

  /** Competes for each exclusive channel: the winner starts it, the others stand by. */
  async contend(slots: ChannelSlot[]): Promise<void> {
    await Promise.all(
      slots
        .filter((slot) => slot.enabled && slot.channel?.exclusive)
        .map((slot) =>
          this.coordinator.lead(slot.name, (leading) => {
            if (!leading) return this.retire(slot);
            // A slot not started yet is started by the gateway itself, which finds it may.
            if (slot.override?.state !== "standby") return;
            // An instance still finishing its replies cannot take updates again: a fresh one does.
            const retiring = slot.channel !== undefined && this.retiring.has(slot.channel);
            // The old leader is dead by now (its heartbeat is as old as the lease): its messages of
            // this channel are taken over at once, not at the next sweep.
            (retiring ? this.host.renewSlot(slot) : this.host.startSlot(slot))
              .then(() => this.sweepSoon())
              .catch((err: unknown) =>
                this.host.logger.error({ err, channel: slot.name }, "could not start a channel this replica now leads"),
              );
          }),
        ),
    );
  }

  /**
   * The lease was lost while this replica lives (another took it, or it could not be renewed):
   * the channel stops taking updates at once, since another replica may poll the bot now; the
   * replies running here finish through its send path, and then it stops. A channel that cannot
   * stop its intake alone stops at once.
   */
  private retire(slot: ChannelSlot): void {
    this.standBy(slot);
    const channel = slot.channel;
    if (!channel || this.retiring.has(channel)) return;
    const done = (async () => {
      if (channel.stopIntake) {
        await channel.stopIntake();
        await this.host.dispatcher()?.settledOn(slot.name);
      }
      await channel.stop();
    })()
      .catch((err: unknown) => this.host.logger.warn({ err, channel: slot.name }, "channel stop failed"))
      .finally(() => this.retiring.delete(channel));
    this.retiring.set(channel, done);
  }

  /**
   * A clean stop, first step: each exclusive channel this replica leads stops taking updates, and
   * its lease is given up at once, so another replica polls while the replies here finish through
   * the send path. A channel that cannot stop its intake alone keeps its lease until `close`.
   */
  async handOver(): Promise<void> {
    const slots = this.host.slots().filter((s) => s.channel?.exclusive && s.channel.stopIntake);
    await Promise.all(
      slots.map(async (slot) => {
        try {
          // Also a channel this replica has not started yet: it may be starting, having just won its lease.
          await slot.channel?.stopIntake?.();
          await this.coordinator.resign(slot.name);
        } catch (err) {
          this.host.logger.warn({ err, channel: slot.name }, "could not hand a channel over");
        }
      }),
    );
  }

  private standBy(slot: ChannelSlot): void {
    slot.override = { state: "standby", reason: standbyReason(this.leaderOf(slot) ?? null) };
  }

  /** The replica leading a channel, as last seen (no query), for reports; undefined for a shared channel. */
  leaderOf(slot: ChannelSlot): string | null | undefined {
    if (!slot.channel?.exclusive) return undefined;
    return this.coordinator.leads(slot.name) ? this.id : (this.coordinator.knownLeader(slot.name) ?? null);
  }

  /** The live replicas, for `/api/replicas`. */
  replicas(): Promise<ReplicaInfo[]> {
    return this.coordinator.replicas();
  }

  /** Takes over the unfinished messages of replicas that are gone, for the channels that run here. */
  private async sweep(): Promise<void> {
    const dispatcher = this.host.dispatcher();
    if (!dispatcher) return;
    try {
      const live = await this.coordinator.liveIds();
      const here = this.host.slots().filter((s) => this.runsHere(s));
      const names = here.map((s) => s.name);
      const moved: InboxEntry[] = [];
      for (const view of this.host.views()) {
        if (!view.takeOver) continue;
        const all = view.unfinishedOwners ? await view.unfinishedOwners() : (await view.unfinished()).map((e) => e.owner);
        const owners = new Set(all.filter((o): o is string => !!o && !live.has(o)));
        if (owners.size === 0 || names.length === 0) continue;
        moved.push(...(await view.takeOver([...owners], names)));
      }
      if (moved.length > 0) this.host.logger.info({ count: moved.length }, "took over messages of replicas that are gone");
      for (const slot of here) {
        const entries = [...(this.unsent.get(slot.name) ?? []), ...moved.filter((e) => e.channel === slot.name)];
        this.unsent.delete(slot.name);
        if (entries.length === 0) continue;
        const left = await dispatcher.recover(slot, entries);
        if (left.length > 0) this.unsent.set(slot.name, left);
      }
    } catch (err) {
      this.host.logger.warn({ err }, "could not look for the work of replicas that are gone");
    }
  }

  /** The slot's channel runs on this replica now. */
  private runsHere(slot: ChannelSlot): boolean {
    if (!slot.enabled || !slot.channel || slot.held) return false;
    return !slot.channel.exclusive || this.coordinator.leads(slot.name);
  }

  /** Stops looking for work and says goodbye, so the others take this replica's leases and waiting messages at once. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.sweeping.catch(() => undefined);
    await Promise.all([...this.retiring.keys()].map((channel) => channel.stop().catch(() => undefined)));
    await this.stops.close();
    await this.coordinator.close();
  }
}

/** Why a channel stands by on this replica, naming the one that runs it. */
export function standbyReason(leader: string | null): string {
  return leader
    ? `replica ${leader} runs this channel; this one takes over if it stops`
    : "no replica runs this channel yet; this one is competing for it";
}

/** A channel's report with the replica last seen leading it, and why this one stands by. */
export function withLeader(report: ChannelReport, leader: string | null | undefined): ChannelReport {
  if (leader === undefined) return report;
  return { ...report, leader, ...(report.state === "standby" ? { reason: standbyReason(leader) } : {}) };
}
