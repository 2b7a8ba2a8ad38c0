/**
 * The tools the agent holds for MCP servers. The agent binds its tools once, but a restarted
 * server comes with new adapter tools, so each agent tool is a stable stand-in with the listed
 * name, description and schema that forwards every call to the server's current connection.
 */
import { DynamicStructuredTool } from "@langchain/core/tools";
import type { McpServer } from "./server.js";

export function forwardingTool(server: McpServer, listed: DynamicStructuredTool, exposedName: string): DynamicStructuredTool {
  const timeout = server.config.tool_timeout_ms;
  return new DynamicStructuredTool({
    name: exposedName,
    description: listed.description,
    schema: listed.schema,
    responseFormat: "content_and_artifact",
    metadata: { ...listed.metadata, mcp_server: server.name, mcp_tool: listed.name },
    // Input was validated against the same schema by this tool; the adapter's func does the call.
    func: (input, runManager, config) =>
      server.call(listed.name, (target) => target.func(input, runManager, { ...config, timeout }) as Promise<unknown>),
  });
}
