/**
 * The subagents feature as a middleware of the chain: it brings the `task` tool (task-tool.ts)
 * and nothing else, so it adds no step to a run. Placed before loop detection, as DeerFlow
 * places its subagent limit.
 */
import { type AgentMiddleware, createMiddleware } from "langchain";
import { type TaskToolOptions, taskTool } from "./task-tool.js";

export const SUBAGENTS = "Subagents";

export function subagentsMiddleware(options: TaskToolOptions): AgentMiddleware {
  return createMiddleware({ name: SUBAGENTS, tools: [taskTool(options)] }) as unknown as AgentMiddleware;
}
