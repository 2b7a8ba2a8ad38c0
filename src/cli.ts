#!/usr/bin/env node
/**
 * The `antler` command: start the gateway, ask a running one for its status, check a config.
 * Exit codes: 0 ok, 1 a problem found at run time, 2 a bad config.
 */
import { Command } from "commander";
import pino from "pino";
import { chatBanner } from "./channels/console/banner.js";
import { ConsoleChannel } from "./channels/console/index.js";
import type { ChannelReport } from "./channels/registry.js";
import { type LoadedConfig, loadConfig } from "./config/loader.js";
import { formatDoctor, runDoctor } from "./doctor.js";
import { ConfigError, errorMessage } from "./errors.js";
import { createGateway } from "./gateway.js";
import { agentSummary } from "./harness/models/index.js";
import type { AgentStatus } from "./harness/types.js";
import { createLogger, type Logger } from "./log/logger.js";
import { formatSchedules, type ScheduleAction, type ScheduleRow, scheduleCall } from "./ops/schedules-cli.js";
import { formatAgentLine, formatStatusTable } from "./ops/status-table.js";
import { preflight } from "./preflight.js";
import { VERSION } from "./version.js";

const EXIT_CONFIG = 2;

function printConfigError(err: ConfigError): void {
  for (const issue of err.issues) process.stderr.write(`config error: ${issue.path ? `${issue.path}: ` : ""}${issue.message}\n`);
}

function load(file: string | undefined): LoadedConfig {
  try {
    return loadConfig({ file, env: process.env, cwd: process.cwd() });
  } catch (err) {
    if (err instanceof ConfigError) {
      printConfigError(err);
      process.exit(EXIT_CONFIG);
    }
    throw err;
  }
}

/** The preflight `start` runs before binding anything: each problem one line, then exit 2. */
async function refuseBadConfig(loaded: LoadedConfig): Promise<void> {
  const issues = await preflight(loaded);
  if (issues.length === 0) return;
  printConfigError(new ConfigError(issues));
  process.exit(EXIT_CONFIG);
}

/** A failure at start: one line, with the stack only when `logging.level` is debug or trace. */
function reportStartFailure(err: unknown, loaded: LoadedConfig, logger: Logger): void {
  if (err instanceof ConfigError) {
    printConfigError(err);
    return;
  }
  if (["debug", "trace"].includes(loaded.config.logging.level)) logger.fatal({ err }, "start failed");
  process.stderr.write(`antler: start failed: ${errorMessage(err)} (logging.level: debug shows the stack)\n`);
}

async function start(opts: { config?: string }): Promise<void> {
  const loaded = load(opts.config);
  const { logging } = loaded.config;
  const logger = createLogger({ level: logging.level, format: logging.format, secrets: loaded.secrets });
  await refuseBadConfig(loaded);
  logger.info({ config: loaded.path, agent: "default", ...agentSummary(loaded.config) }, "antler starting");
  const gateway = createGateway({ loaded, logger });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    // A stuck handle must not keep the process alive forever. The gateway's own stop takes at
    // most two drain periods plus closing, well inside this; docker/compose.yaml allows longer.
    setTimeout(() => process.exit(1), 25_000).unref();
    gateway.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  try {
    await gateway.start();
  } catch (err) {
    reportStartFailure(err, loaded, logger);
    await gateway.stop().catch(() => undefined);
    process.exit(err instanceof ConfigError ? EXIT_CONFIG : 1);
  }
}

type AdminOpts = { config?: string; url?: string; token?: string };

/** Where a running gateway's admin API answers, and the token for it: from the options, else the config. */
function adminOf(opts: AdminOpts): { base: string; token: string | undefined } {
  const loaded = opts.url && opts.token !== undefined ? undefined : load(opts.config);
  const server = loaded?.config.server;
  const base = opts.url ?? `http://${server?.host === "0.0.0.0" ? "127.0.0.1" : server?.host}:${server?.port}`;
  return { base, token: opts.token ?? server?.admin_token };
}

async function status(opts: AdminOpts): Promise<void> {
  const { base, token } = adminOf(opts);
  try {
    const res = await fetch(new URL("/api/channels", base), { headers: token ? { authorization: `Bearer ${token}` } : {} });
    if (!res.ok) {
      process.stdout.write(`${base}: HTTP ${res.status}: ${await res.text()}\n`);
      process.exitCode = 1;
      return;
    }
    const { channels } = (await res.json()) as { channels: ChannelReport[] };
    process.stdout.write(formatStatusTable(channels));
    const agent = await fetch(new URL("/api/agent", base), { headers: token ? { authorization: `Bearer ${token}` } : {} });
    const status = agent.ok ? ((await agent.json()) as AgentStatus) : undefined;
    process.stdout.write(status ? formatAgentLine(status) : `agent: HTTP ${agent.status}\n`);
    const healthy =
      channels.every((c) => !c.enabled || c.state === "running" || c.state === "standby") && status?.reachable !== false;
    process.exitCode = healthy ? 0 : 1;
  } catch (err) {
    process.stdout.write(`${base}: not reachable (${errorMessage((err as { cause?: unknown }).cause ?? err)})\n`);
    process.exitCode = 1;
  }
}

/** `antler schedules [list|pause|resume|delete] [id]`. */
async function schedules(action: string | undefined, id: string | undefined, opts: AdminOpts): Promise<void> {
  const verb = (action ?? "list") as ScheduleAction;
  if (!["list", "pause", "resume", "delete"].includes(verb))
    throw new Error(`unknown action ${action}: list, pause, resume or delete`);
  const { base, token } = adminOf(opts);
  const call = scheduleCall(verb, id);
  try {
    const res = await fetch(new URL(call.path, base), {
      method: call.method,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    const body = (await res.json().catch(() => ({}))) as {
      schedules?: ScheduleRow[];
      error?: string;
      deleted?: string;
    } & ScheduleRow;
    if (!res.ok) {
      process.stdout.write(`${base}: HTTP ${res.status}: ${body.error ?? ""}\n`);
      process.exitCode = 1;
    } else if (verb === "list") process.stdout.write(formatSchedules(body.schedules ?? []));
    else if (verb === "delete") process.stdout.write(`deleted ${body.deleted}\n`);
    else process.stdout.write(formatSchedules([body]));
  } catch (err) {
    process.stdout.write(`${base}: not reachable (${errorMessage((err as { cause?: unknown }).cause ?? err)})\n`);
    process.exitCode = 1;
  }
}

async function doctor(opts: { config?: string }): Promise<void> {
  const loaded = load(opts.config);
  const logger = createLogger({ level: "error", secrets: loaded.secrets, destination: pino.destination(2) });
  try {
    const lines = await runDoctor(loaded, logger);
    process.stdout.write(formatDoctor(lines));
    process.exitCode = lines.every((l) => l.ok) ? 0 : 1;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    printConfigError(err);
    process.exit(EXIT_CONFIG);
  }
}

/** A conversation in the terminal through the console channel, with the config's model and storage. */
async function chat(opts: { config?: string }): Promise<void> {
  const loaded = load(opts.config);
  const logger = createLogger({
    level: "warn",
    format: chatLogFormat(loaded),
    secrets: loaded.secrets,
    destination: pino.destination(2),
  });
  const gateway = createGateway({ loaded, logger, serve: false, channels: { console: { enabled: true } } });
  const summary = agentSummary(loaded.config);
  process.stdout.write(
    chatBanner({
      version: VERSION,
      configFile: loaded.path,
      backend: summary.backend,
      model: summary.model,
      modelId: summary.model_id,
      baseUrl: summary.base_url,
    }),
  );
  ConsoleChannel.io = {
    input: process.stdin,
    output: process.stdout,
    idle: () => gateway.messageDispatcher?.idle() ?? Promise.resolve(),
  };
  await gateway.start();
  const terminal = gateway.slot("console")?.channel as ConsoleChannel | undefined;
  if (!terminal) throw new Error(gateway.slot("console")?.report().reason ?? "console channel did not start");
  process.on("SIGINT", () => {
    terminal.endLine();
    void gateway.stop().then(() => process.exit(0));
  });
  await terminal.closed;
  await gateway.messageDispatcher?.idle();
  terminal.endLine();
  await gateway.stop();
}

/** The chat's warnings go to stderr, readable lines on a terminal unless the config asks for JSON. */
function chatLogFormat(loaded: LoadedConfig): "json" | "pretty" {
  const { format } = loaded.config.logging;
  if (format !== "auto") return format;
  return process.stderr.isTTY ? "pretty" : "json";
}

const program = new Command()
  .name("antler")
  .description("Channels-first IM gateway for LangGraph agents")
  .version(VERSION, "-v, --version", "print Antler's version")
  .showHelpAfterError();

program
  .command("start")
  .description("run the gateway")
  .option("-c, --config <file>", "config file (default ./config.yaml, else ./config.example.yaml)")
  .action(start);
program
  .command("status")
  .description("ask a running gateway how it is")
  .option("-c, --config <file>", "config file that names the server address")
  .option("--url <url>", "gateway base URL, instead of reading the config")
  .option("--token <token>", "admin token, instead of server.admin_token from the config")
  .action(status);
program
  .command("schedules")
  .description("list a running gateway's schedules, or pause, resume or delete one")
  .argument("[action]", "list (default), pause, resume or delete")
  .argument("[id]", "the schedule's id, for pause, resume and delete")
  .option("-c, --config <file>", "config file that names the server address")
  .option("--url <url>", "gateway base URL, instead of reading the config")
  .option("--token <token>", "admin token, instead of server.admin_token from the config")
  .action(schedules);
program
  .command("doctor")
  .description("check the config, credentials and model endpoints")
  .option("-c, --config <file>", "config file")
  .action(doctor);

program
  .command("chat")
  .description("talk to the agent in this terminal")
  .option("-c, --config <file>", "config file")
  .action(chat);

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`antler: ${errorMessage(err)}\n`);
  process.exit(1);
});
