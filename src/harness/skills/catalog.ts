/**
 * Where an agent's skills come from: the shared folders (`skills.paths`), then its tenant's own
 * (`tenants.<name>.skills`, which win over a shared skill of the same name), narrowed to the
 * names the agent lists (`skills`). Every problem (a folder that is not there, a SKILL.md that
 * does not parse, a name found twice, a name the agent lists that no folder has) is one
 * ConfigError naming the key and the file, so a broken skill stops the start, not a chat.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { DEFAULT_TENANT } from "../../config/agents.js";
import type { AgentConfig, AppConfig } from "../../config/schema.js";
import { ConfigError, type ConfigIssue } from "../../errors.js";
import { parseSkill, SKILL_FILE, type Skill } from "./parse.js";

export interface AgentSkillsOptions {
  /** The config file's folder: relative paths start there. */
  baseDir: string;
  /** The tenant the agent serves; its own folders join the shared ones. */
  tenant?: string;
  /** Where the agent's settings sit (`agent`, `agents.<name>`), for errors. */
  section?: string;
}

/** The skills one agent gets, in the order it lists them (else shared first, then its tenant's). */
export async function agentSkills(config: AppConfig, settings: AgentConfig, options: AgentSkillsOptions): Promise<Skill[]> {
  const issues: ConfigIssue[] = [];
  const tenant = options.tenant ?? DEFAULT_TENANT;
  const shared = await findSkills(config.skills.paths, "skills.paths", options.baseDir, issues);
  const ownPaths = tenant === DEFAULT_TENANT ? [] : (config.tenants[tenant]?.skills ?? []);
  const own = await findSkills(ownPaths, `tenants.${tenant}.skills`, options.baseDir, issues);
  const byName = new Map<string, Skill>();
  for (const skill of [...shared, ...own]) byName.set(skill.name, skill);
  const chosen = settings.skills === undefined ? [...byName.values()] : [];
  settings.skills?.forEach((name, i) => {
    const skill = byName.get(name);
    if (skill) chosen.push(skill);
    else {
      const where = ownPaths.length > 0 ? `skills.paths or tenants.${tenant}.skills` : "skills.paths";
      const known = byName.size > 0 ? `known: ${[...byName.keys()].join(", ")}` : "none found";
      issues.push({
        path: `${options.section ?? "agent"}.skills[${i}]`,
        message: `no skill named "${name}" in ${where} (${known})`,
      });
    }
  });
  if (issues.length > 0) throw new ConfigError(issues);
  return chosen;
}

/**
 * The skills under `paths` (each a skill folder or a folder of them), by name; `key` names the
 * config list for errors. Problems go to `issues`.
 */
export async function findSkills(
  paths: readonly string[],
  key: string,
  baseDir: string,
  issues: ConfigIssue[],
): Promise<Skill[]> {
  const found: Skill[] = [];
  const seen = new Map<string, string>();
  for (const [i, written] of paths.entries()) {
    const at = `${key}[${i}]`;
    const dir = path.resolve(baseDir, written);
    if (!(await isDir(dir))) {
      issues.push({ path: at, message: `${dir} is not a folder: create it or fix the path (relative to ${baseDir})` });
      continue;
    }
    const folders = (await isFile(path.join(dir, SKILL_FILE))) ? [dir] : await skillFolders(dir);
    for (const folder of folders) {
      const file = path.join(folder, SKILL_FILE);
      const parsed = parseSkill(await readFile(file, "utf8"));
      if ("problem" in parsed) {
        issues.push({ path: at, message: `${file} ${parsed.problem}` });
        continue;
      }
      const other = seen.get(parsed.name);
      if (other) {
        issues.push({ path: at, message: `${file} and ${other} are both named "${parsed.name}": rename one` });
        continue;
      }
      seen.set(parsed.name, file);
      found.push({ name: parsed.name, description: parsed.description, dir: folder, file });
    }
  }
  return found;
}

/** Subfolders of `dir` that hold a SKILL.md, by name. */
async function skillFolders(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const folders: string[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!e.isDirectory() || e.name.startsWith(".")) continue;
    if (await isFile(path.join(dir, e.name, SKILL_FILE))) folders.push(path.join(dir, e.name));
  }
  return folders;
}

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isDirectory() ?? false;
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isFile() ?? false;
}
