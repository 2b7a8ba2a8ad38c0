/**
 * What every probe shares: a context that owns its temp folder, fakes, model and gateway
 * processes (all closed by `close()`, whatever happened), the gateway config they run with,
 * and the one way an {@link Outcome} becomes a row of the summary table.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { ADMIN_TOKEN, GatewayProcess } from "./gateway-process.js";
import type { Outcome } from "./ledger.js";
import { type ScriptedModel, startScriptedModel } from "./model.js";
import { TelegramWorld, type TelegramWorldOptions } from "./telegram.js";
import { freePort, tempDir } from "./util.js";

export interface Settings {
  short: boolean;
  keepLogs: boolean;
  /** The gateway's cli.js to run (default dist/cli.js of this checkout), e.g. to compare two builds. */
  cli?: string;
}

export interface ProbeResult {
  probe: string;
  messages: number;
  answeredOnce: number;
  lost: number;
  duplicates: number;
  crashes: number;
  maxRssMb: number;
  /** Explanations: notices by text, copies after applied 5xx, timings. */
  notes: string[];
  /** Checks that failed besides lost/duplicates/crashes (a 5xx to bad input, a delayed reply, …). */
  failures: string[];
  /** Log lines and counts that show why, when something failed. */
  evidence: string[];
}

export interface GatewayParts {
  channels: Record<string, unknown>;
  gateway?: Record<string, unknown>;
  /** Extra keys of the one model entry. */
  model?: Record<string, unknown>;
  server?: Record<string, unknown>;
  /** Listen here (a webhook URL must be known before the gateway starts); a free port otherwise. */
  port?: number;
  /** More top-level keys of the config (`tools`, `routes`, …). */
  extra?: Record<string, unknown>;
}

export class ProbeContext {
  readonly dir: string;
  readonly gateways: GatewayProcess[] = [];
  world: TelegramWorld | undefined;
  /** The rows as they stand, for a probe that counts on its own; the runner shows them if the probe times out. */
  snapshot: (() => ProbeResult[]) | undefined;
  private readonly cleanups: Array<() => unknown> = [];
  private closed = false;

  constructor(
    readonly name: string,
    readonly settings: Settings,
  ) {
    this.dir = tempDir(name);
  }

  /** Picks the short or the full value. */
  size<T>(short: T, full: T): T {
    return this.settings.short ? short : full;
  }

  /** Closes at once what a timed-out probe still opens after `close()`. */
  defer(cleanup: () => unknown): void {
    if (this.closed)
      void Promise.resolve()
        .then(cleanup)
        .catch(() => undefined);
    else this.cleanups.push(cleanup);
  }

  async model(reply?: Parameters<typeof startScriptedModel>[0]): Promise<ScriptedModel> {
    const model = await startScriptedModel(reply);
    this.defer(() => model.close());
    return model;
  }

  async telegram(options: TelegramWorldOptions = {}): Promise<TelegramWorld> {
    const world = await TelegramWorld.start(options);
    this.world = world;
    this.defer(() => world.close());
    return world;
  }

  /** Writes the config and starts the built gateway (not waiting for it). */
  async gateway(model: ScriptedModel, parts: GatewayParts): Promise<GatewayProcess> {
    if (this.closed) throw new Error("the probe is over: no new gateway process");
    const port = parts.port ?? (await freePort());
    const config = {
      server: { host: "127.0.0.1", port, admin_token: ADMIN_TOKEN, ...parts.server },
      storage: { path: path.join(this.dir, "antler.db") },
      logging: { level: "warn", format: "json" },
      models: [
        {
          name: "mock",
          use: "@langchain/openai:ChatOpenAI",
          model: "mock-model",
          api_key: "sk-reliability-not-a-secret",
          base_url: model.url,
          max_retries: 1,
          ...parts.model,
        },
      ],
      gateway: parts.gateway ?? {},
      channels: parts.channels,
      ...parts.extra,
    };
    const gw = new GatewayProcess(this.dir, port, config, this.settings.cli);
    this.gateways.push(gw);
    this.defer(() => gw.kill("SIGKILL", 5_000));
    gw.start();
    return gw;
  }

  /** Closes everything, newest first; removes the temp folder unless logs are kept. */
  async close(keep: boolean): Promise<void> {
    this.closed = true;
    for (const gw of this.gateways) gw.retire();
    for (const cleanup of this.cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // best effort: the next resource must still be closed
      }
    }
    if (!keep) rmSync(this.dir, { recursive: true, force: true });
  }

  get crashes(): number {
    return this.gateways.reduce((n, g) => n + g.crashes, 0);
  }

  get maxRssMb(): number {
    return Math.round(Math.max(0, ...this.gateways.map((g) => g.maxRssKb)) / 1024);
  }

  /** Error and warning lines of every gateway log, for the evidence column. */
  logEvidence(max = 6): string[] {
    return this.gateways.flatMap((g) => g.logSummary(40, max));
  }

  /**
   * A summary row from what the users saw. A partial left beside a complete copy of its reply
   * always fails; with `repliesExpected` (nothing in the probe stops a reply from succeeding), so
   * does a notice in place of a reply: that is a finished answer the gateway dropped.
   */
  result(outcome: Outcome, notes: string[] = [], failures: string[] = [], repliesExpected = false): ProbeResult {
    failures = [...failures];
    if (outcome.partialsBesideReply) {
      failures.push(`${outcome.partialsBesideReply} stale partial(s) left beside a complete copy of the same reply`);
    }
    if (repliesExpected && outcome.byNotice) {
      failures.push(`${outcome.byNotice} message(s) got a notice instead of a reply that the model did produce`);
    }
    const row: ProbeResult = {
      probe: this.name,
      messages: outcome.messages,
      answeredOnce: outcome.answeredOnce,
      lost: outcome.lost,
      duplicates: outcome.duplicates,
      crashes: this.crashes,
      maxRssMb: this.maxRssMb,
      notes: [...notesFrom(outcome), ...notes],
      failures,
      evidence: [],
    };
    if (row.lost || row.duplicates || row.crashes || row.failures.length) row.evidence = this.logEvidence();
    return row;
  }
}

function notesFrom(o: Outcome): string[] {
  const notes: string[] = [];
  if (o.byNotice) notes.push(`${o.byNotice} answered by a notice, not a reply`);
  for (const [text, n] of o.notices) notes.push(`notice ${n}×: "${text}"`);
  if (o.extraNotices) notes.push(`${o.extraNotices} notice(s) beside a complete reply`);
  if (o.stalePartials) notes.push(`${o.stalePartials} cut-off partial reply message(s) left as they were`);
  if (o.pointers) notes.push(`${o.pointers} partial(s) edited to point at a full copy that follows`);
  if (o.excusedPartials) notes.push(`${o.excusedPartials} partial(s) posted by a call the platform applied and then failed`);
  if (o.excusedCopies) {
    notes.push(
      `${o.excusedCopies} extra copy(ies) after a 5xx the platform sent for a call it had applied (not counted as duplicates)`,
    );
  }
  if (o.lostIds.length) notes.push(`lost: ${o.lostIds.slice(0, 8).join(", ")}${o.lostIds.length > 8 ? ", …" : ""}`);
  return notes;
}
