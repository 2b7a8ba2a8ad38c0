/**
 * Agents and tenants as the config declares them: which agents exist, which tenant owns each
 * channel, agent and MCP server, and which agents a tenant's chats may use. `checkAgentsAndTenants`
 * is the cross-section check the schema runs; `Tenancy` answers the questions the gateway asks.
 *
 * Ownership rules:
 * - A channel, agent or MCP server listed under a tenant belongs to it; anything not listed
 *   belongs to no tenant. Channels not listed belong to the `default` tenant.
 * - An agent owned by no tenant (the default agent among them) is shared: every tenant that uses
 *   it gets its own instance, with its own checkpoints and MCP clients.
 * - A tenant may use its own agents and the shared ones; an agent may use its tenant's MCP servers
 *   and those owned by no tenant.
 */

import { DEFAULT_TENANT } from "../storage/tenant.js";
import type { AgentConfig, AppConfig, McpServerConfig } from "./sections.js";
import { checkSubagents } from "./subagents.js";

/** The name of `agent:` in routes, `/agent` and metrics. */
export const DEFAULT_AGENT = "default";
/** The tenant of everything no tenant lists (one constant, kept with the storage that scopes by it). */
export { DEFAULT_TENANT };
/** Names of agents and tenants: shown in chats and used as metric labels, so no spaces. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** A config problem found across sections, with the key path it concerns. */
export interface CrossIssue {
  path: (string | number)[];
  message: string;
}

/** The parts of the config these checks read (the schema passes its parsed value before the cross-checks). */
type Sections = Pick<
  AppConfig,
  "server" | "models" | "agent" | "agents" | "routes" | "tenants" | "tools" | "mcp_servers" | "channels"
>;

type Add = (path: (string | number)[], message: string) => void;
/** Who owns each channel, agent and MCP server a tenant lists (tenant by name). */
type Owners = Record<"channels" | "agents" | "mcp_servers", Map<string, string>>;

/** Every problem that spans sections: unknown names, names claimed twice, routes across tenants. */
export function checkAgentsAndTenants(config: Sections): CrossIssue[] {
  const issues: CrossIssue[] = [];
  const add: Add = (path, message) => {
    issues.push({ path, message });
  };
  const agentNames = new Set([DEFAULT_AGENT, ...Object.keys(config.agents)]);
  checkReferences(config, agentNames, add);
  checkAdminTokens(config, add);
  const owners = checkOwners(config, add);
  if (issues.length > 0) return issues; // the checks below assume the names resolve
  checkTenantBounds(config, agentNames, owners, add);
  return issues;
}

/** Agents' names, and every agent, model, tool and MCP server that agents and routes name. */
function checkReferences(config: Sections, agentNames: Set<string>, add: Add): void {
  const toolNames = new Set(config.tools.map((t) => t.name));
  const modelNames = config.models.map((m) => m.name);
  const known = `known agents: ${[...agentNames].join(", ")}`;

  for (const [name, agent] of Object.entries(config.agents)) {
    if (name === DEFAULT_AGENT) add(["agents", name], `"${DEFAULT_AGENT}" is the agent under agent:; give this one another name`);
    else if (!NAME_PATTERN.test(name))
      add(["agents", name], "must be letters, digits, '_', '.' or '-', starting with a letter or digit");
    checkAgentRefs(agent, ["agents", name]);
  }
  checkAgentRefs(config.agent, ["agent"]);

  function checkAgentRefs(agent: AgentConfig, at: (string | number)[]): void {
    if (agent.model && !modelNames.includes(agent.model)) {
      const known = modelNames.length > 0 ? `known models: ${modelNames.join(", ")}` : "models: is empty";
      add([...at, "model"], `no model named "${agent.model}" under models: (${known}): fix the name or add that model`);
    }
    if (agent.memory.model && !modelNames.includes(agent.memory.model)) {
      add([...at, "memory", "model"], `no model named "${agent.memory.model}" under models: fix the name or add that model`);
    }
    agent.tools?.forEach((tool, i) => {
      if (!toolNames.has(tool)) add([...at, "tools", i], `no tool named "${tool}" under tools:`);
    });
    agent.mcp_servers?.forEach((server, i) => {
      if (!(server in config.mcp_servers)) add([...at, "mcp_servers", i], `no server named "${server}" under mcp_servers:`);
    });
    for (const issue of checkSubagents(agent.features.subagents, agent.subagents, modelNames, at)) add(issue.path, issue.message);
  }

  config.routes.forEach((route, i) => {
    if (!agentNames.has(route.agent)) add(["routes", i, "agent"], `no agent named "${route.agent}": ${known}`);
    route.switch_to?.forEach((name, j) => {
      if (!agentNames.has(name)) add(["routes", i, "switch_to", j], `no agent named "${name}": ${known}`);
    });
  });
}

/** Each admin token (the server's and every tenant's) is its own. */
function checkAdminTokens(config: Sections, add: Add): void {
  const tokens = new Map<string, string>();
  if (config.server.admin_token) tokens.set(config.server.admin_token, "server.admin_token");
  for (const [tenant, settings] of Object.entries(config.tenants)) {
    const token = settings.admin_token;
    if (!token) continue;
    const taken = tokens.get(token);
    if (taken) add(["tenants", tenant, "admin_token"], `is the same as ${taken}: each admin token must be its own`);
    else tokens.set(token, `tenants.${tenant}.admin_token`);
  }
}

/** Tenants' names, and what each lists: it exists, and no other tenant claims it. */
function checkOwners(config: Sections, add: Add): Owners {
  const owners: Owners = {
    channels: new Map<string, string>(),
    agents: new Map<string, string>(),
    mcp_servers: new Map<string, string>(),
  };
  for (const [tenant, settings] of Object.entries(config.tenants)) {
    if (tenant === DEFAULT_TENANT)
      add(["tenants", tenant], `"${DEFAULT_TENANT}" is the tenant of everything no tenant lists; pick another name`);
    else if (!NAME_PATTERN.test(tenant))
      add(["tenants", tenant], "must be letters, digits, '_', '.' or '-', starting with a letter or digit");
    const exists = {
      channels: (n: string) => n in config.channels,
      agents: (n: string) => n in config.agents,
      mcp_servers: (n: string) => n in config.mcp_servers,
    };
    for (const kind of ["channels", "agents", "mcp_servers"] as const) {
      settings[kind].forEach((name, i) => {
        const where = kind === "agents" ? "agents: (the default agent is shared)" : `${kind}:`;
        const owner = owners[kind].get(name);
        if (!exists[kind](name)) add(["tenants", tenant, kind, i], `no entry named "${name}" under ${where}`);
        else if (owner) add(["tenants", tenant, kind, i], `"${name}" already belongs to tenant ${owner}`);
        else owners[kind].set(name, tenant);
      });
    }
  }
  return owners;
}

/** What tenants may reach: their default agent, their agents' MCP servers, and the channels of their routes. */
function checkTenantBounds(config: Sections, agentNames: Set<string>, owners: Owners, add: Add): void {
  const tenancy = new Tenancy(config as AppConfig);
  for (const [tenant, settings] of Object.entries(config.tenants)) {
    const fallback = settings.default_agent;
    if (fallback && !tenancy.agentsFor(tenant).includes(fallback)) {
      add(
        ["tenants", tenant, "default_agent"],
        `"${fallback}" is not an agent this tenant may use: ${tenancy.agentsFor(tenant).join(", ")}`,
      );
    }
  }
  for (const name of agentNames) {
    const owner = tenancy.ownerOfAgent(name);
    const agent = tenancy.agentConfig(name);
    agent.mcp_servers?.forEach((server, i) => {
      const serverOwner = owners.mcp_servers.get(server);
      if (serverOwner && serverOwner !== owner) {
        const at = name === DEFAULT_AGENT ? ["agent"] : ["agents", name];
        add([...at, "mcp_servers", i], `server "${server}" belongs to tenant ${serverOwner}, which does not own this agent`);
      }
    });
  }
  config.routes.forEach((route, i) => {
    const owner = tenancy.ownerOfAgent(route.agent);
    if (!owner) return;
    const foreign = (route.channel ?? []).filter((c) => tenancy.tenantOfChannel(c) !== owner);
    if (!route.channel || foreign.length > 0) {
      add(
        ["routes", i, "channel"],
        `agent "${route.agent}" belongs to tenant ${owner}: list only that tenant's channels here (${
          route.channel ? `not ${foreign.join(", ")}` : "this rule matches every channel"
        })`,
      );
    }
  });
}

/** Who owns what, and what each tenant may use, from a valid config. */
export class Tenancy {
  private readonly channelOwner = new Map<string, string>();
  private readonly agentOwner = new Map<string, string>();
  private readonly serverOwner = new Map<string, string>();

  constructor(private readonly config: AppConfig) {
    for (const [tenant, settings] of Object.entries(config.tenants)) {
      for (const name of settings.channels) this.channelOwner.set(name, tenant);
      for (const name of settings.agents) this.agentOwner.set(name, tenant);
      for (const name of settings.mcp_servers) this.serverOwner.set(name, tenant);
    }
  }

  /** Every tenant, the default one first. */
  tenants(): string[] {
    return [DEFAULT_TENANT, ...Object.keys(this.config.tenants)];
  }

  tenantOfChannel(channel: string): string {
    return this.channelOwner.get(channel) ?? DEFAULT_TENANT;
  }

  /** The tenant that owns an agent; undefined for a shared one. */
  ownerOfAgent(agent: string): string | undefined {
    return this.agentOwner.get(agent);
  }

  /** Names of every agent: the default first, then `agents:` in config order. */
  agentNames(): string[] {
    return [DEFAULT_AGENT, ...Object.keys(this.config.agents)];
  }

  /** The settings of an agent by name (`default` is `agent:`). */
  agentConfig(name: string): AgentConfig {
    const agent = name === DEFAULT_AGENT ? this.config.agent : this.config.agents[name];
    if (!agent) throw new Error(`no agent named ${name}`);
    return agent;
  }

  /** The agents a tenant's chats may use: its own and the shared ones, in config order. */
  agentsFor(tenant: string): string[] {
    return this.agentNames().filter((name) => {
      const owner = this.agentOwner.get(name);
      return owner === undefined || owner === tenant;
    });
  }

  /** The agent of a tenant's chats that no route sends elsewhere. */
  defaultAgentFor(tenant: string): string {
    return this.config.tenants[tenant]?.default_agent ?? DEFAULT_AGENT;
  }

  /** The MCP servers a tenant's agent gets: those it names, or all its tenant may use (disabled ones too, reported as such). */
  mcpServersFor(tenant: string, agent: string): Record<string, McpServerConfig> {
    const named = this.agentConfig(agent).mcp_servers;
    const servers: Record<string, McpServerConfig> = {};
    for (const [name, server] of Object.entries(this.config.mcp_servers)) {
      const owner = this.serverOwner.get(name);
      const usable = owner === undefined || owner === tenant;
      if (usable && (named === undefined || named.includes(name))) servers[name] = server;
    }
    return servers;
  }
}
