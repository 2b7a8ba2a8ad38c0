/**
 * The settings of the features an agent's config turns on beyond switches: its skills (found on
 * disk for its tenant), its guardrails (the lists, and a `use:` policy loaded by reflection) and
 * its per-run limits. A problem in any of them is a ConfigError naming the key.
 */
import type { AgentConfig, AppConfig } from "../../config/schema.js";
import type { Logger } from "../../log/logger.js";
import { loadPolicy } from "../guardrails/policy.js";
import type { FeatureOptions } from "../middleware/chain.js";
import type { GuardrailsOptions } from "../middleware/guardrails.js";
import type { RunBudget } from "../middleware/token-budget.js";
import { agentSkills } from "../skills/catalog.js";

export interface ConfiguredFeaturesOptions {
  /** The config file's folder: skill folders and `use:` paths start there. */
  baseDir: string;
  /** The tenant the agent serves (its own skills join the shared ones). */
  tenant?: string;
  /** Where the agent's settings sit (`agent`, `agents.<name>`), for errors. */
  section?: string;
  logger?: Logger;
}

export async function configuredFeatures(
  config: AppConfig,
  settings: AgentConfig,
  options: ConfiguredFeaturesOptions,
): Promise<FeatureOptions> {
  const out: FeatureOptions = {};
  const skills = await agentSkills(config, settings, options);
  if (skills.length > 0) out.skills = skills;
  const guardrails = settings.features.guardrails ? await guardrailsOf(settings, options) : undefined;
  if (guardrails) out.guardrails = guardrails;
  const budget = budgetOf(settings);
  if (budget) out.budget = budget;
  return out;
}

/** The agent's limits per run, when it has any. */
export function budgetOf(settings: AgentConfig): RunBudget | undefined {
  const { max_tool_calls_per_run: maxToolCalls, max_tokens_per_run: maxTokens } = settings;
  if (maxToolCalls === undefined && maxTokens === undefined) return undefined;
  return { ...(maxToolCalls ? { maxToolCalls } : {}), ...(maxTokens ? { maxTokens } : {}) };
}

async function guardrailsOf(settings: AgentConfig, options: ConfiguredFeaturesOptions): Promise<GuardrailsOptions | undefined> {
  const g = settings.guardrails;
  if (!g) return undefined;
  const key = `${options.section ?? "agent"}.guardrails.use`;
  const policy = g.use ? await loadPolicy(g.use, { baseDir: options.baseDir, key, settings: g.options ?? {} }) : undefined;
  return {
    deny: g.deny,
    ...(g.allow ? { allow: g.allow } : {}),
    ...(policy ? { policy } : {}),
    failClosed: g.fail_closed,
    ...(options.logger ? { logger: options.logger } : {}),
  };
}
