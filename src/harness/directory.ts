/**
 * The agent directory: one harness per tenant and agent. The gateway asks it for the harness that
 * serves a chat once routing has named the tenant and the agent.
 *
 * Each tenant gets its own instance of every agent it may use (its own agents and the shared
 * ones), with its own checkpointer from the configured storage kind (src/storage/: in the shared
 * SQLite file, its checkpoints marked with the tenant, or in a PostgreSQL schema of its own); and
 * its own MCP clients: one set per tenant, started for the servers its agents name.
 * Instances are built when first asked for; `open` builds those of the given tenants at once, so
 * a broken agent fails the start instead of a chat.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { DEFAULT_AGENT, DEFAULT_TENANT, Tenancy } from "../config/agents.js";
import type { AppConfig } from "../config/schema.js";
import { ConfigError } from "../errors.js";
import type { Logger } from "../log/logger.js";
import { type Checkpoints, openCheckpoints } from "../storage/index.js";
import { approvalRuleFor } from "./approvals.js";
import { buildAgent, chosenTools } from "./backends.js";
import type { AgentFiles } from "./files.js";
import { type McpServerReport, McpServers } from "./mcp/index.js";
import { ASK_CLARIFICATION, loadConfigTools } from "./tools/index.js";
import type { AgentStatus, Harness } from "./types.js";
import type { ModelUsage } from "./usage.js";

export interface AgentDirectoryOptions {
  config: AppConfig;
  /** Folder of the config file; storage.path and relative `use:` resolve against it. */
  baseDir: string;
  logger: Logger;
  /** Extra tools every embedded agent gets, besides its configured and MCP tools. */
  tools?: StructuredToolInterface[];
  /** The gateway's thread folders and file outbox, handed to every agent (a remote one posts its presented files there). */
  files?: AgentFiles;
  /** Serves the default agent in every tenant instead of one built from config (tests, SDK use). */
  harness?: Harness;
  /** Receives every model call's token usage, with the tenant and agent it was made for. */
  onUsage?: (who: { tenant: string; agent: string }, usage: ModelUsage) => void;
}

/** One agent instance and whom it serves. */
export interface AgentEntry {
  tenant: string;
  agent: string;
  harness: Harness;
}

/** An MCP server's report, with the tenant whose client it is. */
export type TenantMcpReport = McpServerReport & { tenant: string };

export class AgentDirectory {
  readonly tenancy: Tenancy;
  private readonly built = new Map<string, Promise<Harness>>();
  private readonly ready = new Map<string, AgentEntry>();
  private readonly mcp = new Map<string, Promise<McpServers>>();
  private readonly mcpStarted = new Map<string, McpServers>();
  /** Which tenant each loaded user graph object serves: one object must not serve two. */
  private readonly graphTenants = new WeakMap<object, string>();
  private configTools: Promise<StructuredToolInterface[]> | undefined;
  private checkpoints: Checkpoints | undefined;
  private closed = false;

  private constructor(private readonly options: AgentDirectoryOptions) {
    this.tenancy = new Tenancy(options.config);
  }

  /** A directory with every agent of `tenants` built (failing if one cannot be). */
  static async open(options: AgentDirectoryOptions, tenants: readonly string[] = [DEFAULT_TENANT]): Promise<AgentDirectory> {
    const directory = new AgentDirectory(options);
    try {
      for (const tenant of tenants) {
        await Promise.all(directory.tenancy.agentsFor(tenant).map((agent) => directory.harness(tenant, agent)));
      }
    } catch (err) {
      await directory.close();
      throw err;
    }
    return directory;
  }

  /** Whether `tenant`'s chats may use `agent` (its own agents and the shared ones). */
  serves(tenant: string, agent: string): boolean {
    return this.tenancy.agentsFor(tenant).includes(agent);
  }

  /** The harness serving `agent` in `tenant`'s chats, built on first use. */
  harness(tenant: string, agent: string): Promise<Harness> {
    if (this.closed) return Promise.reject(new Error("the agent directory is closed"));
    if (!this.serves(tenant, agent)) {
      return Promise.reject(new Error(`tenant ${tenant} has no agent named ${agent}`));
    }
    const id = `${tenant}\u0000${agent}`;
    let building = this.built.get(id);
    if (!building) {
      building = this.build(tenant, agent).then((harness) => {
        this.ready.set(id, { tenant, agent, harness });
        return harness;
      });
      // A failed build is tried again next time rather than remembered.
      building.catch(() => this.built.delete(id));
      this.built.set(id, building);
    }
    return building;
  }

  /** The instances built so far. */
  entries(): AgentEntry[] {
    return [...this.ready.values()];
  }

  /** The default agent of the default tenant, once built (what a one-agent gateway drives). */
  get primary(): Harness | undefined {
    return this.ready.get(`${DEFAULT_TENANT}\u0000${DEFAULT_AGENT}`)?.harness;
  }

  /** Every tenant's MCP servers with their state. */
  mcpReports(): TenantMcpReport[] {
    return [...this.mcpStarted].flatMap(([tenant, servers]) => servers.reports().map((r) => ({ ...r, tenant })));
  }

  /** A tenant's MCP servers, once started. */
  mcpOf(tenant: string): McpServers | undefined {
    return this.mcpStarted.get(tenant);
  }

  /** The approval rule of `tool` for an agent (who may decide, how long it waits). */
  approvalPolicy(_tenant: string, agent: string, tool: string): { approvers: string[]; timeout_ms: number } | undefined {
    if (!this.tenancy.agentNames().includes(agent)) return undefined;
    return approvalRuleFor(this.tenancy.agentConfig(agent).approvals, tool);
  }

  /** An agent's one-line description from config, for `/agent`. */
  describe(agent: string): string | undefined {
    return this.tenancy.agentNames().includes(agent) ? this.tenancy.agentConfig(agent).description : undefined;
  }

  /** Backend, target and reachability of every built instance. */
  async statuses(probe = false): Promise<(AgentStatus & { tenant: string; agent: string })[]> {
    return Promise.all(
      this.entries()
        .filter((e) => e.harness.status)
        .map(async (e) => ({ tenant: e.tenant, agent: e.agent, ...(await e.harness.status!(probe)) })),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A harness handed in is closed by whoever made it.
    const owned = (h: Harness) => h !== this.options.harness;
    await Promise.allSettled([...this.built.values()].map(async (b) => owned(await b) && (await b).close()));
    await Promise.allSettled([...this.mcp.values()].map(async (m) => (await m).close()));
    await this.checkpoints?.close();
  }

  private async build(tenant: string, agent: string): Promise<Harness> {
    const { config, baseDir, logger, onUsage } = this.options;
    if (agent === DEFAULT_AGENT && this.options.harness) return this.options.harness;
    const settings = this.tenancy.agentConfig(agent);
    return buildAgent({
      config,
      settings,
      section: agent === DEFAULT_AGENT ? "agent" : `agents.${agent}`,
      tenant,
      baseDir,
      logger: logger.child({ tenant, agent }),
      checkpointer: () => this.checkpointer(tenant),
      store: () => this.store(tenant),
      configTools: async () => {
        this.configTools ??= loadConfigTools(config.tools, { baseDir, logger });
        return chosenTools(config, settings, await this.configTools);
      },
      tools: async () => {
        const servers = Object.keys(this.tenancy.mcpServersFor(tenant, agent));
        return [...(this.options.tools ?? []), ...(await this.mcpFor(tenant)).toolsOf(servers)];
      },
      onUsage: onUsage && ((usage) => onUsage({ tenant, agent }, usage)),
      files: this.options.files,
      onGraph: (graph) => this.claimGraph(graph, tenant, agent),
    });
  }

  /**
   * One user graph object must not serve two tenants: a module-level createAgent() result cannot
   * be copied (see loadUserGraph), and its checkpoints would mix.
   */
  private claimGraph(graph: object, tenant: string, agent: string): void {
    const holder = this.graphTenants.get(graph);
    if (holder !== undefined && holder !== tenant) {
      throw new ConfigError([
        {
          path: agent === DEFAULT_AGENT ? "agent.graph" : `agents.${agent}.graph`,
          message: `this createAgent() result already serves tenant ${holder}, and its checkpoints cannot be kept apart: export a function that builds it, so each tenant gets its own`,
        },
      ]);
    }
    this.graphTenants.set(graph, tenant);
  }

  /** One MCP client set per tenant, for every server one of its embedded agents may use. */
  private mcpFor(tenant: string): Promise<McpServers> {
    let servers = this.mcp.get(tenant);
    if (!servers) {
      const { config, baseDir, logger } = this.options;
      const wanted = Object.assign(
        {},
        ...this.tenancy
          .agentsFor(tenant)
          .filter((a) => this.tenancy.agentConfig(a).backend === "embedded")
          .map((a) => this.tenancy.mcpServersFor(tenant, a)),
      );
      const reserved = [...config.tools.map((t) => t.name), ...(this.options.tools ?? []).map((t) => t.name), ASK_CLARIFICATION];
      servers = McpServers.start(wanted, { baseDir, logger: logger.child({ tenant }), reservedNames: reserved });
      void servers.then((started) => this.mcpStarted.set(tenant, started));
      this.mcp.set(tenant, servers);
    }
    return servers;
  }

  /** The tenant's checkpointer; every tenant's share what the storage kind opens on first use. */
  private checkpointer(tenant: string): BaseCheckpointSaver | Promise<BaseCheckpointSaver> {
    this.checkpoints ??= openCheckpoints(this.options.config.storage, this.options.baseDir);
    return this.checkpoints.saver(tenant);
  }

  /** The tenant's store (memory per person), beside its checkpoints and kept apart the same way. */
  private store(tenant: string): BaseStore | Promise<BaseStore> {
    this.checkpoints ??= openCheckpoints(this.options.config.storage, this.options.baseDir);
    return this.checkpoints.store(tenant);
  }
}
