/** Subagents: the `task` tool, its per-run limit, and the setup built from `agent.subagents`. */
export { subagentSetup } from "./from-config.js";
export { SUBAGENTS, subagentsMiddleware } from "./middleware.js";
export { RunSlots } from "./slots.js";
export { TASK, type TaskToolOptions, taskTool } from "./task-tool.js";
export type { SubagentSpec, SubagentsSetup } from "./types.js";
