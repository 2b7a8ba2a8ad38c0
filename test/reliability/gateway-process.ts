/**
 * The built gateway (`node dist/cli.js start`) in a child process: config in a temp folder, logs
 * (JSON) to a file there, VmRSS sampled while it runs, and every exit recorded so a probe can
 * tell a crash (an exit nobody asked for, or a failed clean stop) from a kill it made itself.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { sleep, until } from "./util.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const CLI = path.join(ROOT, "dist/cli.js");
export const ADMIN_TOKEN = "reliability-admin-token";

export interface ExitRecord {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** We sent the signal that ended it. */
  asked: NodeJS.Signals | undefined;
  at: number;
}

export class GatewayProcess {
  readonly url: string;
  readonly logFile: string;
  readonly exits: ExitRecord[] = [];
  maxRssKb = 0;
  private child: ChildProcess | undefined;
  private asked: NodeJS.Signals | undefined;
  private exited: Promise<ExitRecord> | undefined;
  private sampler: NodeJS.Timeout | undefined;
  private retired = false;

  constructor(
    readonly dir: string,
    readonly port: number,
    config: Record<string, unknown>,
    private readonly cli = CLI,
  ) {
    this.url = `http://127.0.0.1:${port}`;
    this.logFile = path.join(dir, "gateway.log");
    writeFileSync(path.join(dir, "config.yaml"), stringify(config));
  }

  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  get alive(): boolean {
    return this.pid !== undefined;
  }

  /** Exits nobody asked for, and clean stops (SIGTERM) that did not end with code 0. */
  get crashes(): number {
    return this.exits.filter((e) => e.asked === undefined || (e.asked === "SIGTERM" && e.code !== 0)).length;
  }

  start(): void {
    if (this.retired) throw new Error("the probe is over: no new gateway process");
    if (!existsSync(this.cli)) throw new Error(`${this.cli} is missing: run npm run build first`);
    if (this.alive) throw new Error("the gateway is already running");
    const fd = openSync(this.logFile, "a");
    const child = spawn(process.execPath, [this.cli, "start", "--config", path.join(this.dir, "config.yaml")], {
      cwd: this.dir,
      env: { ...process.env, NODE_OPTIONS: "" },
      stdio: ["ignore", fd, fd],
    });
    closeSync(fd);
    this.child = child;
    this.asked = undefined;
    this.exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        const record = { code, signal, asked: this.asked, at: Date.now() };
        this.exits.push(record);
        clearInterval(this.sampler);
        resolve(record);
      });
    });
    this.sampler = setInterval(() => this.sample(), 200);
  }

  /** Waits until /api/channels shows each of `channels` running; false on timeout or exit. */
  async waitReady(channels: string[], timeoutMs = 30_000): Promise<boolean> {
    return until(async () => {
      if (!this.alive) return true;
      const reports = await this.channelReports();
      return channels.every((name) => reports?.find((r) => r.name === name)?.state === "running");
    }, timeoutMs).then((ok) => ok && this.alive);
  }

  async channelReports(): Promise<Array<{ name: string; state: string }> | undefined> {
    return (await this.adminJson<{ channels: Array<{ name: string; state: string }> }>("/api/channels"))?.channels;
  }

  /** GET of an admin route (e.g. `/api/channels`) with the admin token; undefined unless a 2xx came in time. */
  async adminJson<T>(route: string, timeoutMs = 2_000): Promise<T | undefined> {
    try {
      const res = await fetch(`${this.url}${route}`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) return undefined;
      return (await res.json()) as T;
    } catch {
      return undefined;
    }
  }

  /** Sends `signal` and waits for the exit (SIGKILL after `graceMs` if it hangs). */
  async kill(signal: NodeJS.Signals, graceMs = 30_000): Promise<ExitRecord | undefined> {
    const child = this.child;
    if (!child || !this.alive) return this.exits.at(-1);
    this.asked = signal;
    child.kill(signal);
    const exit = await Promise.race([this.exited, sleep(graceMs).then(() => undefined)]);
    if (exit) return exit;
    this.asked = "SIGKILL";
    child.kill("SIGKILL");
    return this.exited;
  }

  /** For cleanup: kills the child and refuses later starts (a timed-out probe may still try one). */
  retire(): void {
    this.retired = true;
    this.killNow();
  }

  /** Best effort: the child must not outlive the runner. */
  killNow(): void {
    if (this.alive) {
      this.asked ??= "SIGKILL";
      this.child?.kill("SIGKILL");
    }
    clearInterval(this.sampler);
  }

  /** Distinct log messages at `minLevel` or above (pino levels: 40 warn, 50 error), most frequent first. */
  logSummary(minLevel = 50, max = 6): string[] {
    if (!existsSync(this.logFile)) return [];
    const counts = new Map<string, number>();
    for (const line of readFileSync(this.logFile, "utf8").split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
        if ((entry.level ?? 0) < minLevel) continue;
        const detail = entry.err?.message ? `: ${entry.err.message.split("\n")[0]?.slice(0, 120)}` : "";
        const key = `${entry.msg ?? "?"}${detail}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      } catch {
        // not a log line
      }
    }
    return [...counts.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, max)
      .map(([msg, n]) => `${n}× ${msg}`);
  }

  private sample(): void {
    const pid = this.pid;
    if (pid === undefined) return;
    this.maxRssKb = Math.max(this.maxRssKb, rssKb(pid));
  }
}

function rssKb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    try {
      return Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }).trim()) || 0;
    } catch {
      return 0;
    }
  }
}
