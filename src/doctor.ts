/**
 * `antler doctor`: checks what can be checked before going live — first the preflight that
 * `antler start` runs (src/preflight.ts: `use:` paths, channel blocks and credentials, the port,
 * the storage), then the live checks: each enabled channel's credentials against its platform, each model endpoint, each MCP server (started,
 * its tools listed, then stopped), each agent's backend (a user's graph loads; a remote server
 * answers, takes the key and has the assistant) and the routes (rules that can never match).
 * One line per check.
 */
import { MemorySaver } from "@langchain/langgraph";
import { loadChannels } from "./channels/registry.js";
import { DEFAULT_AGENT, Tenancy } from "./config/agents.js";
import type { ModelConfig } from "./config/schema.js";
import { ConfigError, errorMessage } from "./errors.js";
import { loadUserGraph } from "./harness/graph/index.js";
import { type McpServerReport, McpServers } from "./harness/mcp/index.js";
import { type ModelHints, probeModel } from "./harness/models/probe.js";
import { ASK_CLARIFICATION } from "./harness/tools/index.js";
import type { Logger } from "./log/logger.js";
import { type PreflightConfig, preflight } from "./preflight.js";
import { routeWarnings } from "./routing/index.js";

export interface DoctorLine {
  ok: boolean;
  subject: string;
  detail: string;
}

const CHECK_TIMEOUT_MS = 10_000;

export async function runDoctor(loaded: PreflightConfig, logger: Logger): Promise<DoctorLine[]> {
  const lines: DoctorLine[] = [{ ok: true, subject: "config", detail: loaded.path }];
  for (const issue of await preflight(loaded)) {
    lines.push({ ok: false, subject: issue.path || "config", detail: issue.message });
  }
  lines.push(...(await checkChannels(loaded, logger)));
  for (const [i, model] of loaded.config.models.entries()) {
    lines.push(await attempt(`model ${model.name}`, () => checkModel(model, modelHints(loaded, i))));
  }
  lines.push(...(await checkMcpServers(loaded, logger)));
  for (const name of new Tenancy(loaded.config).agentNames()) {
    const agent = await checkAgent(loaded, name, logger);
    if (agent) lines.push(agent);
  }
  for (const warning of routeWarnings(loaded.config)) lines.push({ ok: true, subject: "routes", detail: `warning: ${warning}` });
  return lines;
}

/** Each enabled channel's credentials against its platform. A block the preflight refused is not loaded again. */
async function checkChannels(loaded: PreflightConfig, logger: Logger): Promise<DoctorLine[]> {
  const noHttp = { mount: () => ({ route() {}, unroute() {} }) };
  let slots: Awaited<ReturnType<typeof loadChannels>>;
  try {
    slots = await loadChannels(loaded.config.channels, { baseDir: loaded.baseDir, logger, http: noHttp });
  } catch (err) {
    if (err instanceof ConfigError) return []; // each problem is already a preflight line
    throw err;
  }
  const lines: DoctorLine[] = [];
  for (const slot of slots) {
    const subject = `channel ${slot.name}`;
    if (!slot.enabled) {
      lines.push({ ok: true, subject, detail: "disabled" });
      continue;
    }
    const channel = slot.channel;
    if (!channel) {
      lines.push({ ok: false, subject, detail: slot.held?.reason ?? "failed to load" });
      continue;
    }
    if (!channel.check) {
      lines.push({ ok: true, subject, detail: "loaded (this channel has no credential check)" });
      continue;
    }
    lines.push(await attempt(subject, () => channel.check!()));
  }
  return lines;
}

/** Where model `i`'s base_url and api_key come from: the variable the config reads, else the key in the file. */
function modelHints(loaded: PreflightConfig, i: number): ModelHints {
  const from = (key: string) => loaded.envSources?.[`models[${i}].${key}`] ?? `models[${i}].${key} in ${loaded.path}`;
  return { base_url: from("base_url"), api_key: from("api_key") };
}

/** A `graph` or `remote` agent: the graph loads, or the server answers with the assistant. */
async function checkAgent(loaded: PreflightConfig, name: string, logger: Logger): Promise<DoctorLine | undefined> {
  const agent = new Tenancy(loaded.config).agentConfig(name);
  const subject = name === DEFAULT_AGENT ? "agent" : `agent ${name}`;
  if (agent.backend === "remote" && agent.remote) {
    const { RemoteHarness } = await import("./harness/remote/index.js");
    const remote = new RemoteHarness({ settings: agent.remote, logger });
    return attempt(`${subject} remote`, () => remote.check(CHECK_TIMEOUT_MS));
  }
  if (agent.backend === "graph" && agent.graph) {
    const spec = agent.graph;
    const options = { baseDir: loaded.baseDir, checkpointer: new MemorySaver(), config: loaded.config };
    return attempt(`${subject} graph`, async () => {
      await loadUserGraph(spec, options);
      return `${spec} loads and is a compiled graph`;
    });
  }
  return undefined;
}

/** Starts every MCP server the way the harness does (each bounded by its timeout_ms), then stops them. */
async function checkMcpServers(loaded: PreflightConfig, logger: Logger): Promise<DoctorLine[]> {
  const { config, baseDir } = loaded;
  if (Object.keys(config.mcp_servers).length === 0) return [];
  const reservedNames = [...config.tools.map((t) => t.name), ASK_CLARIFICATION];
  const mcp = await McpServers.start(config.mcp_servers, { baseDir, logger, reservedNames });
  try {
    return mcp.reports().map(mcpLine);
  } finally {
    await mcp.close();
  }
}

const MAX_LISTED_TOOLS = 20;

function mcpLine(report: McpServerReport): DoctorLine {
  const subject = `mcp ${report.name}`;
  if (report.state === "disabled") return { ok: true, subject, detail: "disabled" };
  if (report.state === "failed") return { ok: false, subject, detail: report.error?.message ?? "failed to start" };
  const shown = report.tools.slice(0, MAX_LISTED_TOOLS).join(", ");
  const more = report.tools.length > MAX_LISTED_TOOLS ? ` and ${report.tools.length - MAX_LISTED_TOOLS} more` : "";
  return { ok: true, subject, detail: `${report.transport}, ${report.tools.length} tools: ${shown}${more}` };
}

async function attempt(subject: string, check: () => Promise<string>): Promise<DoctorLine> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS / 1000} s`)), CHECK_TIMEOUT_MS);
  });
  try {
    return { ok: true, subject, detail: await Promise.race([check(), timeout]) };
  } catch (err) {
    return { ok: false, subject, detail: errorMessage(err) };
  } finally {
    clearTimeout(timer);
  }
}

/** An OpenAI-compatible endpoint answers GET /models; other providers are only reported. */
async function checkModel(model: ModelConfig, hints: ModelHints): Promise<string> {
  const result = await probeModel(model, CHECK_TIMEOUT_MS, hints);
  if (result.outcome === "ok" || result.outcome === "unprobed") return result.detail;
  throw new Error(result.detail);
}

export function formatDoctor(lines: DoctorLine[]): string {
  return `${lines.map((l) => `${l.ok ? "ok  " : "FAIL"} ${l.subject}: ${l.detail}`).join("\n")}\n`;
}
