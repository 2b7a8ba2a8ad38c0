/**
 * The gateway: one process that owns the HTTP server, the binding store, the harness and the
 * channels, wired from a loaded config. `createGateway` builds it; `start` brings it up in the
 * order that keeps messages safe (store and harness first, channels last); `stop` reverses it.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BindingStore, InboxEntry } from "./bindings/types.js";
import {
  type ChannelReport,
  type ChannelSlot,
  instantiate,
  type LoadChannelsOptions,
  loadChannels,
  stopChannels,
  stopIntakes,
} from "./channels/registry.js";
import { Tenancy } from "./config/agents.js";
import { collectSecrets, type LoadedConfig } from "./config/loader.js";
import type { ChannelSection } from "./config/schema.js";
import type { Dispatcher, DispatcherObserver } from "./core/dispatcher.js";
import type { Speaker } from "./core/outbox/index.js";
import { ReplicaLink, withLeader } from "./core/replica-link.js";
import { openCore } from "./gateway-core.js";
import type { AgentDirectory, TenantMcpReport } from "./harness/directory.js";
import type { AgentStatus, Harness } from "./harness/types.js";
import { type Logger, secretScrubber } from "./log/logger.js";
import { mountAdmin } from "./ops/admin.js";
import { adminTokens } from "./ops/admin-caller.js";
import type { TenantAgentStatus } from "./ops/admin-source.js";
import { GatewayMetrics } from "./ops/metrics.js";
import { redactReport, redactStatus, type Scrub } from "./ops/redact.js";
import type { ReplicaInfo } from "./replicas/coordinator.js";
import { soleReplica } from "./replicas/membership.js";
import { routeWarnings } from "./routing/index.js";
import { HttpServer, httpLimits, sendJson } from "./server/http.js";
import { openStorage } from "./storage/index.js";
import { Supervisor, type SupervisorOptions } from "./supervisor.js";
import { VERSION } from "./version.js";

export interface GatewayOptions {
  loaded: Pick<LoadedConfig, "config" | "baseDir">;
  logger: Logger;
  /** Serves the default agent (in every tenant) instead of the one built from config. */
  harness?: Harness;
  /** Tools every embedded agent gets besides its configured and MCP tools (SDK use, tests). */
  tools?: StructuredToolInterface[];
  /** Replace the config's `channels` section (e.g. `antler chat` runs only the console). */
  channels?: Record<string, ChannelSection>;
  /** Listen on `server.host:server.port` (default true). */
  serve?: boolean;
  observer?: DispatcherObserver;
  supervisor?: SupervisorOptions;
  /** How long `start` waits for channels to connect (default 15 s). */
  startWaitMs?: number;
  /** How long `stop` lets running replies finish before cancelling them (default: `gateway.drain_ms`). */
  drainMs?: number;
  /** This replica's id in a shared (PostgreSQL) store; `<hostname>-<pid>-<random>` by default. */
  replicaId?: string;
  /** The clock schedules are made and fired by (tests move it); `Date.now` by default. */
  clock?: () => number;
}

/** How long `start` waits for channels to connect before going on without the slow ones. */
const START_WAIT_MS = 15_000;

export class Gateway {
  readonly server: HttpServer;
  private slots: ChannelSlot[] = [];
  private store: BindingStore | undefined;
  /** Every tenant's agents; built by `start`. */
  private agents: AgentDirectory | undefined;
  private dispatcher: Dispatcher | undefined;
  readonly metrics: GatewayMetrics;
  readonly startedAt = Date.now();
  /** The id this process owns inbox events under in a store shared by several replicas. */
  readonly replicaId: string;
  private readonly supervisor: Supervisor;
  private readonly tenancy: Tenancy;
  /**
   * Messages a previous process accepted but never finished, by channel, until that channel is
   * up and their notice is out. A channel that fails at first start gets them on a later restart.
   */
  private readonly leftovers = new Map<string, InboxEntry[]>();
  private readonly restarting = new Map<ChannelSlot, Promise<void>>();
  /** Set when this gateway is one of several replicas on a shared PostgreSQL store. */
  private replicaLink: ReplicaLink | undefined;
  /** The store's view of every tenant. */
  private views: BindingStore[] = [];
  /** Hides configured credentials in every report (platform errors may quote them). */
  private readonly scrub: Scrub;
  /** The outbox and the schedules: what this gateway says first (src/core/outbox/). */
  speaker: Speaker | undefined;

  constructor(private readonly options: GatewayOptions) {
    const { config } = options.loaded;
    this.replicaId = options.replicaId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
    this.scrub = secretScrubber([...collectSecrets(config), ...collectSecrets(options.channels ?? {})]) ?? ((text) => text);
    const { host, port } = config.server;
    this.server = new HttpServer({ host, port, logger: options.logger, limits: httpLimits(config.server) });
    // Webhooks answer 503 + Retry-After until start() is done, so platforms deliver again.
    this.server.pause("starting");
    this.server.route("GET", "/healthz", (_req, res) => sendJson(res, 200, { ok: true }), { alwaysOpen: true });
    this.metrics = new GatewayMetrics({
      queueDepth: () => this.dispatcher?.queueDepth ?? 0,
      activeRuns: () => this.dispatcher?.activeRuns ?? 0,
    });
    this.tenancy = new Tenancy(config);
    mountAdmin(this.server, this, { ...adminTokens(config), version: VERSION });
    this.supervisor = new Supervisor(
      () => this.slots,
      (slot) => this.restartSlot(slot),
      options.logger,
      options.supervisor,
    );
  }

  /** The binding store, once `start` has opened it (for tests and tools that read it back). */
  get bindingStore(): BindingStore | undefined {
    return this.store;
  }

  /** Every tenant's agents, once `start` has built them. */
  get agentDirectory(): AgentDirectory | undefined {
    return this.agents;
  }

  /** The dispatcher every channel hands its messages to, once `start` has built it. */
  get messageDispatcher(): Dispatcher | undefined {
    return this.dispatcher;
  }

  reports(): ChannelReport[] {
    return this.slots.map((s) => this.reportOf(s));
  }

  report(name: string): ChannelReport | undefined {
    const slot = this.slot(name);
    return slot && this.reportOf(slot);
  }

  /** A slot's report; with several replicas, an exclusive channel's also names its leader as last seen. */
  private reportOf(slot: ChannelSlot): ChannelReport {
    return withLeader(redactReport(slot.report(), this.scrub), this.replicaLink?.leaderOf(slot));
  }

  /**
   * The live replicas sharing this gateway's store, with the channels each leads; with one
   * process (SQLite), just this one.
   */
  async replicas(): Promise<ReplicaInfo[]> {
    if (this.replicaLink) return this.replicaLink.replicas();
    const leads = this.slots.filter((s) => s.channel?.exclusive && s.report().state === "running").map((s) => s.name);
    return [soleReplica(this.replicaId, this.startedAt, this.serverUrl() ?? null, leads)];
  }

  /** The default agent of the default tenant: what a gateway with one agent drives. */
  get harness(): Harness | undefined {
    return this.agents?.primary;
  }

  /** Every tenant's MCP servers (those of embedded agents). */
  mcpReports(): TenantMcpReport[] {
    return this.agents?.mcpReports() ?? [];
  }

  /** Every agent instance built so far, by tenant and agent, with its status. */
  async agentStatuses(probe = false): Promise<TenantAgentStatus[]> {
    return (await this.agents?.statuses(probe))?.map((s) => redactStatus(s, this.scrub)) ?? [];
  }

  /** The tenant a channel belongs to. */
  tenantOf(channel: string): string {
    return this.tenancy.tenantOfChannel(channel);
  }

  /** The agent backend: what it drives and whether it answers (checked now when `probe`). */
  async agentStatus(probe = false): Promise<AgentStatus | undefined> {
    const status = await this.harness?.status?.(probe);
    return status && redactStatus(status, this.scrub);
  }

  /** Restarts a channel by name (admin API); undefined when there is no such channel. */
  async restart(name: string): Promise<ChannelReport | undefined> {
    const slot = this.slot(name);
    if (!slot) return undefined;
    await this.restartSlot(slot);
    return redactReport(slot.report(), this.scrub);
  }

  /**
   * Stops a channel, builds a fresh instance from its config and starts it again. A restart
   * asked for while one is under way (admin API and supervisor at once) joins it: two would
   * each build an instance, and the one replaced first would stay connected, never stopped.
   */
  restartSlot(slot: ChannelSlot): Promise<void> {
    const running = this.restarting.get(slot);
    if (running) return running;
    const restart = this.doRestart(slot).finally(() => this.restarting.delete(slot));
    this.restarting.set(slot, restart);
    return restart;
  }

  private async doRestart(slot: ChannelSlot): Promise<void> {
    if (!slot.enabled) return;
    await slot.channel?.stop().catch((err: unknown) => this.logger.warn({ err, channel: slot.name }, "channel stop failed"));
    await this.renewSlot(slot);
  }

  /** Builds a fresh instance of the slot's channel and starts it; the old one is the caller's to stop. */
  private async renewSlot(slot: ChannelSlot): Promise<void> {
    try {
      slot.channel = await instantiate(slot.name, slot.section, this.channelOptions());
    } catch (err) {
      slot.failedToLoad(err);
      return;
    }
    await this.startSlot(slot);
  }

  get logger(): Logger {
    return this.options.logger;
  }

  /** What every channel instance is built with: the server, and its conversations read back. */
  private channelOptions(): LoadChannelsOptions {
    return {
      baseDir: this.options.loaded.baseDir,
      logger: this.options.logger,
      http: this.server,
      history: (channel, key) => {
        const slot = this.slot(channel);
        if (!slot || !this.dispatcher) return Promise.resolve({ messages: [], waiting: [] });
        return this.dispatcher.history(slot, key);
      },
      serverUrl: () => this.serverUrl(),
      maxFileBytes: Math.floor(this.options.loaded.config.media.max_file_mb * 1024 * 1024),
    };
  }

  /** Where this process's server answers (`http://host:port`, a wildcard address as loopback), once it listens. */
  private serverUrl(): string | undefined {
    const addr = this.server.address();
    if (!addr) return undefined;
    const host = addr.address === "0.0.0.0" || addr.address === "::" ? "127.0.0.1" : addr.address;
    return `http://${host.includes(":") ? `[${host}]` : host}:${addr.port}`;
  }

  /** Looks a channel up by its configured name. */
  slot(name: string): ChannelSlot | undefined {
    return this.slots.find((s) => s.name === name);
  }

  /** Brings the gateway up: the server, then storage, agents and channels, in the order that keeps messages safe. */
  async start(): Promise<void> {
    const { config } = this.options.loaded;
    const logger = this.options.logger;
    if (this.options.serve !== false) {
      const addr = await this.server.listen();
      logger.info({ host: addr.address, port: addr.port }, "antler listening");
    }
    const store = await this.openStorage();
    for (const warning of routeWarnings(config)) logger.warn(warning);
    const channels = this.options.channels ?? config.channels;
    await this.openAgents(store, channels);
    await this.readLeftovers();
    await this.openChannels(channels);
  }

  /** Opens the binding store of `storage.kind` and, on a shared (PostgreSQL) one, joins the other replicas. */
  private async openStorage(): Promise<BindingStore> {
    const { config, baseDir } = this.options.loaded;
    const logger = this.options.logger;
    const { store, coordinator } = await openStorage(config.storage, {
      baseDir,
      replica: this.replicaId,
      serverUrl: this.serverUrl(),
      tenants: this.tenancy.tenants().length,
      logger,
    });
    this.store = store;
    if (coordinator) {
      this.replicaLink = new ReplicaLink(coordinator, {
        slots: () => this.slots,
        dispatcher: () => this.dispatcher,
        views: () => this.views,
        startSlot: (slot) => this.startSlot(slot),
        renewSlot: (slot) => this.renewSlot(slot),
        logger,
      });
    }
    return store;
  }

  /**
   * Builds the agents of every tenant that has a channel here (now, so a broken one fails the
   * start), the dispatcher that drives them, and each tenant's view of the store.
   */
  private async openAgents(store: BindingStore, channels: Record<string, ChannelSection>): Promise<void> {
    const { options } = this;
    const core = await openCore({
      loaded: options.loaded,
      tenancy: this.tenancy,
      channels,
      store,
      logger: options.logger,
      metrics: this.metrics,
      ...(options.observer ? { observer: options.observer } : {}),
      ...(options.harness ? { harness: options.harness } : {}),
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      scrub: this.scrub,
      ...(this.replicaLink ? { replicas: this.replicaLink.forDispatcher() } : {}),
      owner: this.replicaId,
      slots: () => this.slots,
    });
    ({ agents: this.agents, dispatcher: this.dispatcher, views: this.views, speaker: this.speaker } = core);
  }

  /**
   * Reads what a previous process left unfinished before any channel can add new work; each
   * tenant's inbox is read through its own view. Replicas instead take over the work of those
   * that are gone, as the link finds it (other replicas' unfinished messages are theirs).
   */
  private async readLeftovers(): Promise<void> {
    if (this.replicaLink) return;
    for (const entry of (await Promise.all(this.views.map((v) => v.unfinished()))).flat()) {
      this.leftovers.set(entry.channel, [...(this.leftovers.get(entry.channel) ?? []), entry]);
    }
  }

  /** Loads and starts every channel, then opens the webhooks and starts the supervisor and the inbox pruning. */
  private async openChannels(channels: Record<string, ChannelSection>): Promise<void> {
    const logger = this.options.logger;
    this.slots = await loadChannels(channels, this.channelOptions());
    if (!this.options.loaded.config.server.admin_token && this.options.serve !== false) {
      logger.warn("server.admin_token is not set: the admin API and status page answer only loopback requests");
    }
    // A platform that keeps a channel connecting must not hold up the rest: wait a bounded time,
    // and let slow channels finish starting in the background (their state says "starting").
    await this.replicaLink?.contend(this.slots);
    this.replicaLink?.start();
    const started = Promise.all(this.slots.map((slot) => this.startSlot(slot)));
    await Promise.race([started, wait(this.options.startWaitMs ?? START_WAIT_MS)]);
    if (this.server.pausedFor === "starting") this.server.resume(); // not if stop() began meanwhile
    this.supervisor.start();
    await this.speaker?.start(channels);
  }

  /** Starts one channel; a failure marks only that channel failed. */
  async startSlot(slot: ChannelSlot): Promise<void> {
    const channel = slot.channel;
    const dispatcher = this.dispatcher;
    if (!channel || !dispatcher || slot.override?.state === "disabled") return;
    // Another replica runs this bot's one connection: stand by.
    if (this.replicaLink && !this.replicaLink.mayStart(slot)) return;
    const logger = this.options.logger;
    const leftovers = this.leftovers.get(slot.name);
    // What the channel delivers at once (sent while the gateway was down) waits behind them.
    const hold = leftovers && dispatcher.hold(slot, leftovers);
    try {
      await slot.start(dispatcher.sinkFor(slot));
      logger.info({ channel: slot.name, mode: channel.status().mode }, "channel started");
    } catch (err) {
      hold?.release();
      // The stack once; the supervisor logs one line for each retry that fails the same way.
      if (slot.firstFailure(err)) logger.error({ channel: slot.name, err }, "channel failed to start");
      return;
    }
    await dispatcher
      .armApprovals(slot)
      .catch((err: unknown) => logger.error({ err, channel: slot.name }, "could not arm approval deadlines"));
    if (!leftovers) return;
    this.leftovers.delete(slot.name);
    // Answered in their held places while the channel runs; notices that could not go out wait for its next start.
    void dispatcher.recover(slot, leftovers, hold).then(
      (unsent) => unsent.length > 0 && this.leftovers.set(slot.name, [...unsent, ...(this.leftovers.get(slot.name) ?? [])]),
      (err: unknown) => logger.error({ err, channel: slot.name }, "could not answer what a previous process left"),
    );
  }

  private handOver(): Promise<void> {
    return this.replicaLink ? this.replicaLink.handOver() : stopIntakes(this.slots, this.logger);
  }

  async stop(): Promise<void> {
    // From here on webhooks answer 503 + Retry-After: the next process takes them.
    this.server.pause("draining");
    this.supervisor.stop();
    this.speaker?.stop();
    const dispatcher = this.dispatcher;
    if (dispatcher) {
      dispatcher.stopAccepting();
      // Before the drain: no update is fetched only to be refused, and another replica takes the bot now.
      await this.handOver();
      const drainMs = this.options.drainMs ?? this.options.loaded.config.gateway.drain_ms;
      const drained = await Promise.race([dispatcher.idle().then(() => true), wait(drainMs).then(() => false)]);
      if (!drained) {
        dispatcher.cancelAll();
        await Promise.race([dispatcher.idle(), wait(drainMs)]);
      }
    }
    await stopChannels(this.slots, this.logger);
    // Gives up this replica's other leases, so the others take its waiting messages at once.
    await this.replicaLink?.close();
    await this.agents?.close();
    await this.store?.close();
    await this.server.close();
    this.options.logger.info("antler stopped");
  }
}

/** Resolves after `ms` without keeping the process alive. */
const wait = (ms: number) => sleep(ms, undefined, { ref: false });

export function createGateway(options: GatewayOptions): Gateway {
  return new Gateway(options);
}
