/**
 * The preflight: what `antler start` checks before it binds anything, and what `antler doctor`
 * reports before its live checks. The config loader has already checked each key's shape; this
 * checks what the config points at:
 * - every `use:` path loads (models, tools, channels, a graph, a backend class of your own);
 * - every channel block passes its class's own schema, a disabled one too;
 * - each enabled built-in channel has the credentials it needs;
 * - an embedded agent has a model;
 * - `server.host:port` is free, and the storage can be written (or reached).
 * Each problem is one line naming the key and the fix, like a config error.
 */
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { checkSection } from "./channels/registry.js";
import { Tenancy } from "./config/agents.js";
import type { EnvSources } from "./config/interpolate.js";
import type { LoadedConfig } from "./config/loader.js";
import { BUILTIN_BACKENDS } from "./config/schema.js";
import { ConfigError, type ConfigIssue, errorMessage } from "./errors.js";
import { silentLogger } from "./log/logger.js";
import { resolveClass, resolveVariable } from "./reflection/index.js";

/** The config as loaded: `path` is named in fixes, `envSources` decides when a fix names a variable. */
export type PreflightConfig = Pick<LoadedConfig, "config" | "baseDir" | "path"> & Partial<Pick<LoadedConfig, "envSources">>;

/** How long the storage check waits for PostgreSQL. */
const DATABASE_TIMEOUT_MS = 5_000;

/** Every problem found, in config order: models, tools, agents, channels, server, storage. */
export async function preflight(loaded: PreflightConfig): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  issues.push(...(await checkModels(loaded)));
  issues.push(...(await checkTools(loaded)));
  issues.push(...(await checkBackends(loaded)));
  issues.push(...(await checkChannels(loaded)));
  issues.push(...(await checkPort(loaded)));
  issues.push(...(await checkStorage(loaded)));
  return issues;
}

/** A `use:`-style path that does not load, as one line: what failed and that the path is the fix. */
async function loads(key: string, spec: string, baseDir: string, kind: "class" | "value"): Promise<ConfigIssue[]> {
  try {
    if (kind === "class") await resolveClass(spec, null, { baseDir });
    else await resolveVariable(spec, null, { baseDir });
    return [];
  } catch (err) {
    const text = errorMessage(err);
    const fix = /npm install/.test(text) ? "" : `: fix ${key} (a relative path starts from ${baseDir})`;
    return [{ path: key, message: `${text.replace(/\.$/, "")}${fix}` }];
  }
}

async function checkModels(loaded: PreflightConfig): Promise<ConfigIssue[]> {
  const { config, baseDir } = loaded;
  const issues: ConfigIssue[] = [];
  for (const [i, model] of config.models.entries())
    issues.push(...(await loads(`models[${i}].use`, model.use, baseDir, "class")));
  if (config.models.length > 0) return issues;
  const tenancy = new Tenancy(config);
  const embedded = tenancy.agentNames().filter((name) => tenancy.agentConfig(name).backend === "embedded");
  if (embedded.length > 0) {
    issues.push({
      path: "models",
      message: `no model configured in ${loaded.path}: add one under models: (name, model, base_url; see config.example.yaml), or give agent.backend a graph or remote server`,
    });
  }
  return issues;
}

async function checkTools(loaded: PreflightConfig): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  for (const [i, tool] of loaded.config.tools.entries()) {
    issues.push(...(await loads(`tools[${i}].use`, tool.use, loaded.baseDir, "value")));
  }
  return issues;
}

/** Each agent's graph (`agent.graph`) and a backend class of your own (`agent.backend: "module:Export"`). */
async function checkBackends(loaded: PreflightConfig): Promise<ConfigIssue[]> {
  const tenancy = new Tenancy(loaded.config);
  const issues: ConfigIssue[] = [];
  for (const name of tenancy.agentNames()) {
    const agent = tenancy.agentConfig(name);
    const at = name === "default" ? "agent" : `agents.${name}`;
    if (agent.backend === "graph" && agent.graph)
      issues.push(...(await loads(`${at}.graph`, agent.graph, loaded.baseDir, "value")));
    if (!(BUILTIN_BACKENDS as readonly string[]).includes(agent.backend)) {
      issues.push(...(await loads(`${at}.backend`, agent.backend, loaded.baseDir, "class")));
    }
  }
  return issues;
}

/**
 * The credentials each built-in channel cannot start without, from its parsed section (defaults
 * filled in, so `mode` is known). Keys the adapter treats as optional are not listed.
 */
const REQUIRED_CREDENTIALS: Readonly<Record<string, (section: Record<string, unknown>) => string[]>> = {
  telegram: (s) => ["bot_token", ...(s.mode === "webhook" ? ["webhook_url", "webhook_secret"] : [])],
  slack: (s) => ["bot_token", s.mode === "webhook" ? "signing_secret" : "app_token"],
  feishu: () => ["app_id", "app_secret"],
  lark: () => ["app_id", "app_secret"],
  dingtalk: () => ["client_id", "client_secret"],
  discord: () => ["bot_token"],
};

/** Every channel block against its class's schema (enabled or not); enabled built-ins for their credentials. */
async function checkChannels(loaded: PreflightConfig): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  for (const [name, section] of Object.entries(loaded.config.channels)) {
    try {
      // Quiet: the gateway logs each old key name's deprecation warning when it builds the channel.
      const checked = await checkSection(name, section, { baseDir: loaded.baseDir, logger: silentLogger() });
      const required = section.enabled && checked.builtin ? REQUIRED_CREDENTIALS[checked.builtin] : undefined;
      if (required) issues.push(...missingCredentials(loaded, name, checked.config, required(checked.config)));
    } catch (err) {
      if (err instanceof ConfigError) issues.push(...err.issues);
      else issues.push({ path: `channels.${name}.use`, message: `${errorMessage(err)}: fix it, or remove use: for a built-in` });
    }
  }
  return issues;
}

/** One line for a channel's missing credentials, naming every key, the file, and a variable only where the config reads one. */
function missingCredentials(
  loaded: PreflightConfig,
  name: string,
  section: Record<string, unknown>,
  required: string[],
): ConfigIssue[] {
  const missing = required.filter((key) => typeof section[key] !== "string" || section[key] === "");
  if (missing.length === 0) return [];
  const sources: EnvSources = loaded.envSources ?? {};
  const fixes = missing.map((key) => {
    const variable = sources[`channels.${name}.${key}`];
    return variable ? `${key} (or set ${variable}: the config reads it from there)` : key;
  });
  const mode = typeof section.mode === "string" ? ` in ${section.mode} mode` : "";
  const keys = missing.map((key) => `channels.${name}.${key}`).join(", ");
  return [
    {
      path: keys,
      message: `required${mode} to start the enabled channel ${name}: write ${fixes.join(" and ")} under channels.${name} in ${loaded.path}, or set channels.${name}.enabled: false`,
    },
  ];
}

/** `server.host:port` is free: a quick listen and close, before the gateway binds it for real. */
async function checkPort(loaded: PreflightConfig): Promise<ConfigIssue[]> {
  const { host, port } = loaded.config.server;
  if (port === 0) return [];
  const code = await new Promise<string | undefined>((resolve) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
  if (code === undefined) return [];
  const where = `${host}:${port}`;
  if (code === "EADDRINUSE") {
    return [
      {
        path: "server.port",
        message: `${where} is already in use (another antler, or another program): stop it, or set server.port to a free port`,
      },
    ];
  }
  if (code === "EACCES") {
    return [{ path: "server.port", message: `${where} may not be bound by this user: set server.port above 1023` }];
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return [
      { path: "server.host", message: `${host} is not an address of this machine: set server.host to 127.0.0.1 or 0.0.0.0` },
    ];
  }
  return [
    { path: "server.port", message: `cannot listen on ${where} (${code}): set server.host and server.port to a free address` },
  ];
}

async function checkStorage(loaded: PreflightConfig): Promise<ConfigIssue[]> {
  const storage = loaded.config.storage;
  if (storage.kind === "postgres") return storage.url ? checkDatabase(storage.url) : [];
  if (storage.path === ":memory:") return [];
  const file = path.resolve(loaded.baseDir, storage.path);
  const problem = unwritable(file);
  if (!problem) return [];
  return [
    {
      path: "storage.path",
      message: `${file} cannot be written (${problem}): point storage.path at a writable file (relative to ${loaded.baseDir})`,
    },
  ];
}

/**
 * Why `file` could not be created or written, without creating anything: the file itself if it
 * exists, else the nearest folder above it that does (the gateway creates the folders between).
 */
function unwritable(file: string): string | undefined {
  let target = file;
  while (!existsSync(target) && path.dirname(target) !== target) target = path.dirname(target);
  try {
    if (target !== file && !statSync(target).isDirectory()) return `${target} is not a folder`;
    accessSync(target, constants.W_OK);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? errorMessage(err);
  }
}

/** PostgreSQL answers `SELECT 1` at `url` within a few seconds. The URL is never quoted: it may hold a password. */
async function checkDatabase(url: string): Promise<ConfigIssue[]> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: DATABASE_TIMEOUT_MS });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return [];
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? errorMessage(err);
    return [
      {
        path: "storage.url",
        message: `PostgreSQL is not reachable there (${why}): start the database or fix storage.url (postgres://user:password@host:5432/db)`,
      },
    ];
  } finally {
    await client.end().catch(() => undefined);
  }
}
