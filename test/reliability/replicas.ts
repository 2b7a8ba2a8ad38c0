/**
 * Several replicas of the built gateway on one PostgreSQL database, for probes and cluster tests:
 * a database of their own (test/cluster/replicas-db.ts), the cluster's mock model (`<id> <kind>`),
 * Telegram polling (one leader polls) and Slack's Events API spread round-robin over every
 * replica's webhook, with Slack's retries shortened to 0 / 0.5 / 1 s. The processes are the
 * cluster tests' `ReplicaCluster`; {@link ReplicaWorld.forProbe} hands them to a probe's context,
 * which then counts their crashes, memory and log lines and kills them whatever happens.
 */
import { type Replica, ReplicaCluster, telegramAndSlack } from "../cluster/replicas.js";
import { ADMIN_URL, type ClusterDatabase, clusterDatabase } from "../cluster/replicas-db.js";
import { SlackUsers, settle, startClusterModel, TelegramUsers, type Users } from "../cluster/replicas-world.js";
import type { MockModel } from "../fakes/openai.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { FakeTelegram } from "../fakes/telegram/index.js";
import type { ProbeContext } from "./harness.js";
import type { Outcome } from "./ledger.js";

export const CHANNELS = ["telegram", "slack"];

export interface ReplicaWorldOptions {
  replicas: number;
  /** `storage.pool_size` of each replica (default 5: the server's 100 connections are shared with other runs). */
  poolSize?: number;
  /** `gateway:` settings of every replica. */
  gateway?: Record<string, unknown>;
  /** The replicas' folders go here (left to the caller); a temp folder, removed at close, otherwise. */
  dir?: string;
  keepLogs?: boolean;
  /** The gateway's cli.js (default dist/cli.js). */
  cli?: string;
  /** A URL whose role owns the replicas' new database (default: the vitest run's; a probe gives the admin URL). */
  ownerUrl?: string;
}

export class ReplicaWorld {
  readonly tg: TelegramUsers;
  readonly sl: SlackUsers;

  private constructor(
    readonly db: ClusterDatabase,
    readonly model: MockModel,
    readonly telegram: FakeTelegram,
    readonly slack: FakeSlack,
    readonly cluster: ReplicaCluster,
  ) {
    this.tg = new TelegramUsers(telegram);
    this.sl = new SlackUsers(slack);
  }

  /** Starts everything and waits until every replica runs both channels or stands by. */
  static async start(options: ReplicaWorldOptions): Promise<ReplicaWorld> {
    const opened: Array<() => Promise<unknown>> = [];
    const close = async () => {
      for (const c of opened.reverse()) await c().catch(() => undefined);
    };
    try {
      const db = await clusterDatabase(options.ownerUrl);
      opened.push(() => db.drop());
      const model = await startClusterModel();
      opened.push(() => model.close());
      const telegram = await FakeTelegram.start();
      opened.push(() => telegram.close());
      // Slack waits 1 and 5 minutes before its 2nd and 3rd retries; a probe cannot.
      const slack = await FakeSlack.start({
        mode: "webhook",
        companionMessages: false,
        http: { spread: "round-robin", retryDelaysMs: [0, 500, 1_000] },
      });
      opened.push(() => slack.close());
      const cluster = await ReplicaCluster.start({
        replicas: options.replicas,
        databaseUrl: db.url,
        modelUrl: model.url,
        poolSize: options.poolSize ?? 5,
        ...(options.gateway ? { gateway: options.gateway } : {}),
        ...(options.dir ? { dir: options.dir } : {}),
        ...(options.keepLogs ? { keepLogs: true } : {}),
        ...(options.cli ? { cli: options.cli } : {}),
        channels: telegramAndSlack(telegram, slack),
      });
      opened.push(() => cluster.close());
      const world = new ReplicaWorld(db, model, telegram, slack, cluster);
      world.sendSlackToAll();
      return world;
    } catch (err) {
      await close();
      throw err;
    }
  }

  /**
   * For a probe: the replicas live in the probe's folder and count as its gateways (crashes, RSS,
   * evidence, killed on exit); everything is closed with the context. Waits until the cluster is ready.
   */
  static async forProbe(ctx: ProbeContext, replicas: number, options: Partial<ReplicaWorldOptions> = {}): Promise<ReplicaWorld> {
    const world = await ReplicaWorld.start({
      replicas,
      dir: ctx.dir,
      ownerUrl: ADMIN_URL,
      ...(ctx.settings.cli ? { cli: ctx.settings.cli } : {}),
      ...options,
    });
    ctx.defer(() => world.close());
    for (const r of world.cluster.members) ctx.gateways.push(r.process);
    await world.cluster.waitReady(CHANNELS, 90_000);
    return world;
  }

  /** Slack delivers to every replica's webhook, round-robin (a dead one's tries fail and are retried). */
  sendSlackToAll(): void {
    this.slack.eventsUrls = this.cluster.members.map((r) => webhookOf(r));
  }

  /** Slack delivers to these replicas only. */
  sendSlackTo(replicas: Replica[]): void {
    this.slack.eventsUrls = replicas.map((r) => webhookOf(r));
  }

  get users(): Users[] {
    return [this.tg, this.sl];
  }

  /** Both platforms' counts together. */
  evaluate(): Outcome {
    return combine(this.users.map((u) => u.evaluate()));
  }

  /** Chats (of both platforms) whose answers, notices included, did not come in the order sent. */
  outOfOrder(): string[] {
    return this.users.flatMap((u) => u.outOfOrder(true));
  }

  /**
   * Waits until every message shows its reply or a notice (or `timeoutMs` passed), then until the
   * chats stay the same for 1.5 s, so a late duplicate still shows. Returns the ms until answered.
   */
  settle(timeoutMs: number): Promise<number> {
    return settle(this.users, timeoutMs, true);
  }

  async close(): Promise<void> {
    await this.cluster.close();
    await this.telegram.close();
    await this.slack.close();
    await this.model.close();
    await this.db.drop();
  }
}

function webhookOf(r: Replica): string {
  return `${r.url}/webhooks/slack`;
}

/** Several outcomes counted as one. */
export function combine(outcomes: Outcome[]): Outcome {
  const sum = (pick: (o: Outcome) => number) => outcomes.reduce((n, o) => n + pick(o), 0);
  const notices = new Map<string, number>();
  for (const o of outcomes) for (const [text, n] of o.notices) notices.set(text, (notices.get(text) ?? 0) + n);
  return {
    messages: sum((o) => o.messages),
    answeredOnce: sum((o) => o.answeredOnce),
    lost: sum((o) => o.lost),
    duplicates: sum((o) => o.duplicates),
    byNotice: sum((o) => o.byNotice),
    excusedCopies: sum((o) => o.excusedCopies),
    notices,
    extraNotices: sum((o) => o.extraNotices),
    stalePartials: sum((o) => o.stalePartials),
    partialsBesideReply: sum((o) => o.partialsBesideReply),
    excusedPartials: sum((o) => o.excusedPartials),
    pointers: sum((o) => o.pointers),
    lostIds: outcomes.flatMap((o) => o.lostIds),
    firstTextMs: outcomes.flatMap((o) => o.firstTextMs),
    lastReplyAt: Math.max(0, ...outcomes.map((o) => o.lastReplyAt)),
  };
}
