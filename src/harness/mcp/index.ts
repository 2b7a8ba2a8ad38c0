/**
 * MCP servers from config: every enabled server starts in parallel, each bounded by its own
 * `timeout_ms`, so a broken server costs at most its timeout and never fails the harness. Their
 * tools are named (prefix, collisions) and handed to the agent as forwarding tools.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { McpServerConfig } from "../../config/schema.js";
import type { Logger } from "../../log/logger.js";
import { assignToolNames } from "./naming.js";
import { McpServer } from "./server.js";
import { forwardingTool } from "./tools.js";

export { assignToolNames, sanitizeToolName } from "./naming.js";
export { McpServer, type McpServerReport, type McpServerState } from "./server.js";

export interface StartMcpOptions {
  /** Folder of the config file (default cwd of stdio servers). */
  baseDir: string;
  logger: Logger;
  /** Names other tools already hold; an MCP tool with one of them gets its server's name in front. */
  reservedNames?: Iterable<string>;
}

export class McpServers {
  private constructor(
    readonly servers: McpServer[],
    /** Every server's tools, in config order. */
    readonly tools: StructuredToolInterface[],
    private readonly byServer: ReadonlyMap<string, StructuredToolInterface[]>,
  ) {}

  /** Starts every enabled server and waits until each is ready or has failed (never throws). */
  static async start(configs: Record<string, McpServerConfig>, options: StartMcpOptions): Promise<McpServers> {
    const servers = Object.entries(configs).map(([name, config]) => new McpServer(name, config, options));
    await Promise.all(servers.map((s) => s.connect()));
    const { names, dropped } = assignToolNames(
      servers.map((s) => ({ server: s.name, prefix: s.config.tool_prefix, tools: s.listed.map((t) => t.name) })),
      options.reservedNames ?? [],
    );
    for (const d of dropped) {
      options.logger.warn({ mcp: d.server, tool: d.tool, name: d.name }, "MCP tool left out: its name is taken");
    }
    const byServer = new Map<string, StructuredToolInterface[]>();
    for (const server of servers) {
      const own = names.get(server.name) ?? new Map<string, string>();
      const tools: StructuredToolInterface[] = [];
      for (const listed of server.listed) {
        const exposed = own.get(listed.name);
        if (exposed) tools.push(forwardingTool(server, listed, exposed));
      }
      byServer.set(server.name, tools);
      server.exposed = [...own.values()];
    }
    return new McpServers(servers, [...byServer.values()].flat(), byServer);
  }

  /** The tools of the named servers, in config order. */
  toolsOf(names: Iterable<string>): StructuredToolInterface[] {
    const wanted = new Set(names);
    return [...this.byServer].flatMap(([name, tools]) => (wanted.has(name) ? tools : []));
  }

  /** A server by its config name. */
  server(name: string) {
    return this.servers.find((s) => s.name === name);
  }

  reports() {
    return this.servers.map((s) => s.report());
  }

  /** Closes every client and stops every server process. */
  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.close()));
  }
}
