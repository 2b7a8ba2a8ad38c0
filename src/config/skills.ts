/**
 * Skills (src/harness/skills/): folders with a SKILL.md (front matter `name` and `description`,
 * then the instructions), which the embedded agent sees as a list and loads one of on demand.
 * Where they live is config: shared folders at the top, a tenant's own folders under its entry,
 * and each agent's choice by name.
 */
import { z } from "zod";

/**
 * Folders of skills, relative to the config file: each one is a skill (it holds a SKILL.md) or
 * a folder whose subfolders are skills.
 */
export const SkillPaths = z.array(z.string().min(1, "must be a folder path"));

/** The top-level `skills:` section: the folders every tenant's agents may use. */
export const SkillsConfig = z
  .strictObject({
    paths: SkillPaths.default([]),
  })
  .prefault({});

/** `agent.skills`: the names of the skills this agent gets; every skill its tenant sees when absent, none when empty. */
export const AgentSkills = z.array(z.string().min(1)).optional();

export type SkillsConfig = z.output<typeof SkillsConfig>;
