/**
 * `agent.subagents` (and `agents.<name>.subagents`): the named subagents the lead agent may hand a
 * task to through its `task` tool when `features.subagents` is on, how many of them one run may
 * have going at once, and how long each may take. The tool itself is src/harness/subagents/.
 */
import { z } from "zod";
import { num } from "./values.js";

/** DeerFlow's default: at most three subagents of one run at work at a time. */
export const DEFAULT_MAX_CONCURRENT_SUBAGENTS = 3;
/** DeerFlow's default time for one subagent: 15 minutes. */
export const DEFAULT_SUBAGENT_TIMEOUT_MS = 900_000;

/** A subagent's name is what the model writes as `subagent_type`. */
const SUBAGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

const positiveInt = () => num().pipe(z.number().int().positive());

/** One subagent: its own prompt, model and tools. */
export const SubagentConfig = z.strictObject({
  /** When the lead agent should hand a task to it; the model reads this in the `task` tool's description. */
  description: z.string().min(1, "is required: say when the lead agent should use this subagent"),
  system_prompt: z.string().min(1, "is required: the subagent's own instructions"),
  /** A `models:` entry; the lead agent's model when absent. */
  model: z.string().optional(),
  /** Names of the lead agent's tools it may use (configured or MCP); all of them when absent, none when `[]`. */
  tools: z.array(z.string()).optional(),
  /** Overrides `subagents.timeout_ms` for this one. */
  timeout_ms: positiveInt().optional(),
});

export const SubagentsConfig = z
  .strictObject({
    /** Subagents of one run working at the same time; further `task` calls wait for a free slot. */
    max_concurrent: positiveInt().default(DEFAULT_MAX_CONCURRENT_SUBAGENTS),
    /** How long one subagent may work (from when it gets its slot) before it is stopped. */
    timeout_ms: positiveInt().default(DEFAULT_SUBAGENT_TIMEOUT_MS),
    agents: z.record(z.string(), SubagentConfig).default({}),
  })
  .superRefine((section, ctx) => {
    for (const name of Object.keys(section.agents)) {
      if (SUBAGENT_NAME.test(name)) continue;
      ctx.addIssue({
        code: "custom",
        path: ["agents", name],
        message: "must be letters, digits, '_' or '-', starting with a letter or digit",
      });
    }
  })
  .prefault({});

export type SubagentConfig = z.output<typeof SubagentConfig>;
export type SubagentsConfig = z.output<typeof SubagentsConfig>;

/** A problem the cross-section check reports: where, and what to do. */
interface SubagentIssue {
  path: (string | number)[];
  message: string;
}

/**
 * What the schema of one agent cannot see: the switch is on but no subagent is named, or a
 * subagent names a model `models:` does not have. `at` is the agent's path (`agent`, `agents.x`).
 * Tool names are checked when the agent is built, against its tools (MCP tools are known only then).
 */
export function checkSubagents(
  enabled: boolean,
  section: SubagentsConfig,
  modelNames: readonly string[],
  at: (string | number)[],
): SubagentIssue[] {
  const issues: SubagentIssue[] = [];
  if (enabled && Object.keys(section.agents).length === 0) {
    issues.push({
      path: [...at, "subagents", "agents"],
      message: "features.subagents is on but no subagent is named: add one (description, system_prompt) or turn the feature off",
    });
  }
  for (const [name, sub] of Object.entries(section.agents)) {
    if (sub.model && !modelNames.includes(sub.model)) {
      issues.push({
        path: [...at, "subagents", "agents", name, "model"],
        message: `no model named "${sub.model}" under models: (known: ${modelNames.join(", ") || "none"}): fix the name or add that model`,
      });
    }
  }
  return issues;
}
