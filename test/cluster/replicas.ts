/**
 * Several built gateway processes (`node dist/cli.js start`) that share one PostgreSQL
 * database, one mock model and one set of fake platforms, each on its own port and in its own
 * temp folder (config.yaml, gateway.log). A test can kill any of them (SIGKILL or SIGTERM) and
 * read `/api/replicas` and `/api/channels` from any of them. The process side is the reliability
 * suite's {@link GatewayProcess}.
 */
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import type { FakeSlack } from "../fakes/slack/index.js";
import { slackConfigFor } from "../fakes/slack/rig.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { ADMIN_TOKEN, GatewayProcess } from "../reliability/gateway-process.js";
import { freePort, tempDir, until } from "../reliability/util.js";

/** One entry of `GET /api/replicas`. */
export interface ReplicaEntry {
  id: string;
  pid: number;
  host: string;
  url: string;
  started_at: string;
  heartbeat_at: string;
  /** Channels this replica leads (runs their one connection). */
  leads: string[];
}

/** One entry of `GET /api/channels`, with the keys a cluster adds. */
export interface ChannelEntry {
  name: string;
  state: string;
  /** The replica that runs this exclusive channel, null while none does; absent for webhook channels. */
  leader?: string | null;
}

export interface ReplicaSpec {
  /** `replica-<n>`, also the name the fakes know its calls by. */
  name: string;
  index: number;
  port: number;
  /** The replica's own base URL (`http://127.0.0.1:<port>`). */
  url: string;
}

export interface ClusterOptions {
  replicas: number;
  /** `storage.url`: the database every replica shares. */
  databaseUrl: string;
  /** `base_url` of the mock model (ends in /v1). */
  modelUrl: string;
  /** `channels:` of one replica (each may get its own API root or webhook URL). */
  channels: (replica: ReplicaSpec) => Record<string, unknown> | Promise<Record<string, unknown>>;
  gateway?: Record<string, unknown>;
  /** Further top-level sections of every replica's config (e.g. `outbox:`, `schedules:`). */
  sections?: Record<string, unknown>;
  /** `storage.pool_size` of each replica (the server's connection limit is shared by all of them). */
  poolSize?: number;
  /** Keep the temp folder (logs) after close. */
  keepLogs?: boolean;
  /** The replicas' folders go here, and `close` leaves it to its owner; a temp folder otherwise. */
  dir?: string;
  /** The gateway's cli.js to run (default dist/cli.js of this checkout). */
  cli?: string;
}

export class Replica {
  constructor(
    readonly spec: ReplicaSpec,
    readonly process: GatewayProcess,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  get url(): string {
    return this.spec.url;
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get alive(): boolean {
    return this.process.alive;
  }

  async replicas(): Promise<ReplicaEntry[] | undefined> {
    return (await this.process.adminJson<{ replicas: ReplicaEntry[] }>("/api/replicas"))?.replicas;
  }

  async channels(): Promise<ChannelEntry[] | undefined> {
    return (await this.process.adminJson<{ channels: ChannelEntry[] }>("/api/channels"))?.channels;
  }
}

export class ReplicaCluster {
  readonly dir: string;
  readonly members: Replica[] = [];

  private constructor(private readonly options: ClusterOptions) {
    this.dir = options.dir ?? tempDir("cluster");
  }

  /** Starts every replica at once (they race for migrations and leases, as a deploy would). */
  static async start(options: ClusterOptions): Promise<ReplicaCluster> {
    const cluster = new ReplicaCluster(options);
    try {
      for (let i = 0; i < options.replicas; i++) await cluster.add(i);
      for (const r of cluster.members) r.process.start();
      return cluster;
    } catch (err) {
      await cluster.close();
      throw err;
    }
  }

  get live(): Replica[] {
    return this.members.filter((r) => r.alive);
  }

  byPid(pid: number): Replica | undefined {
    return this.members.find((r) => r.pid === pid);
  }

  /**
   * Waits until every live replica answers `/api/channels` with each of `channels` either
   * running or on standby, and `/api/replicas` from one of them lists them all.
   */
  async waitReady(channels: string[], timeoutMs = 60_000): Promise<void> {
    const ready = await until(
      async () => {
        for (const r of this.live) {
          const reports = await r.channels();
          const ok = channels.every((name) =>
            ["running", "standby"].includes(reports?.find((c) => c.name === name)?.state ?? ""),
          );
          if (!ok) return false;
        }
        const listed = await this.live[0]?.replicas();
        return listed !== undefined && this.live.every((r) => listed.some((e) => e.pid === r.pid));
      },
      timeoutMs,
      200,
    );
    if (!ready) throw new Error(`the cluster was not ready within ${timeoutMs} ms: ${this.describe()}`);
  }

  /** The replica that leads `channel`, read from a live replica's `/api/channels` and `/api/replicas`. */
  async leaderOf(channel: string): Promise<Replica | undefined> {
    for (const r of this.live) {
      const [channels, replicas] = await Promise.all([r.channels(), r.replicas()]);
      const id = channels?.find((c) => c.name === channel)?.leader;
      const entry = replicas?.find((e) => e.id === id);
      if (entry) return this.byPid(entry.pid);
    }
    return undefined;
  }

  /** Waits until a live replica leads `channel`, other than `not` (after a failover). */
  async waitLeader(channel: string, timeoutMs: number, not?: Replica): Promise<Replica> {
    let leader: Replica | undefined;
    const ok = await until(
      async () => {
        leader = await this.leaderOf(channel);
        return leader !== undefined && leader !== not && leader.alive;
      },
      timeoutMs,
      100,
    );
    if (!ok || !leader) throw new Error(`no replica leads ${channel} after ${timeoutMs} ms: ${this.describe()}`);
    return leader;
  }

  /** Warnings and errors of every replica's log, for a failure message. */
  evidence(max = 6): string[] {
    return this.members.flatMap((r) => r.process.logSummary(40, max).map((line) => `${r.name}: ${line}`));
  }

  /** Exits nobody asked for (or failed clean stops), over all replicas. */
  get crashes(): number {
    return this.members.reduce((n, r) => n + r.process.crashes, 0);
  }

  describe(): string {
    return this.members.map((r) => `${r.name} pid ${r.pid ?? "-"} ${r.alive ? "up" : "down"} (${r.process.logFile})`).join("; ");
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((r) => r.process.kill("SIGTERM", 5_000)));
    for (const r of this.members) r.process.retire();
    if (!this.options.keepLogs && !this.options.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  private async add(index: number): Promise<void> {
    const port = await freePort();
    const spec: ReplicaSpec = { name: `replica-${index + 1}`, index, port, url: `http://127.0.0.1:${port}` };
    const dir = path.join(this.dir, spec.name);
    mkdirSync(dir);
    const config = {
      server: { host: "127.0.0.1", port, admin_token: ADMIN_TOKEN },
      storage: {
        kind: "postgres",
        url: this.options.databaseUrl,
        ...(this.options.poolSize !== undefined ? { pool_size: this.options.poolSize } : {}),
      },
      logging: { level: "warn", format: "json" },
      models: [
        {
          name: "mock",
          use: "@langchain/openai:ChatOpenAI",
          model: "mock-model",
          api_key: "sk-cluster-not-a-secret",
          base_url: this.options.modelUrl,
          max_retries: 1,
        },
      ],
      gateway: this.options.gateway ?? {},
      channels: await this.options.channels(spec),
      ...this.options.sections,
    };
    this.members.push(new Replica(spec, new GatewayProcess(dir, port, config, this.options.cli)));
  }
}

/**
 * `channels:` of each replica in the Telegram and Slack worlds: Telegram polling through an API
 * root of the replica's own (so the fake knows who polls), and the Slack webhook and Web API.
 */
export function telegramAndSlack(telegram: FakeTelegram, slack: FakeSlack): ClusterOptions["channels"] {
  return async (r) => ({
    telegram: {
      enabled: true,
      mode: "polling",
      bot_token: telegram.token,
      api_base: await telegram.listenFor(r.name),
      edit_interval_ms: 300,
    },
    slack: { enabled: true, ...slackConfigFor(slack, { api_base: await slack.listenFor(r.name), edit_interval_ms: 300 }) },
  });
}
