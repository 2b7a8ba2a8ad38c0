/**
 * One SKILL.md: YAML front matter between `---` lines with `name` and `description`, then the
 * instructions. `parseSkill` says what is wrong in words an author can act on.
 */
import { parse as parseYaml } from "yaml";

/** The file that makes a folder a skill. */
export const SKILL_FILE = "SKILL.md";

/** Letters, digits, `_ . -`, starting with a letter or digit: what a model can type back exactly. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_DESCRIPTION = 1024;
const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** A skill found on disk. Its instructions are read again from `file` when the agent loads it. */
export interface Skill {
  name: string;
  /** One line: what the skill is for, as the agent's list shows it. */
  description: string;
  /** The skill's folder, absolute. */
  dir: string;
  /** Its SKILL.md, absolute. */
  file: string;
}

export interface ParsedSkill {
  name: string;
  description: string;
  /** The instructions: everything after the front matter, trimmed. */
  body: string;
}

/** The parts of a SKILL.md, or the problem that keeps it from being a skill. */
export function parseSkill(text: string): ParsedSkill | { problem: string } {
  const match = FRONT_MATTER.exec(text);
  if (!match) {
    return { problem: "has no front matter: start it with a --- line, name: and description:, then another --- line" };
  }
  let meta: unknown;
  try {
    meta = parseYaml(match[1] ?? "");
  } catch (err) {
    return { problem: `its front matter is not valid YAML: ${(err as Error).message.split("\n")[0]}` };
  }
  if (!meta || typeof meta !== "object" || Array.isArray(meta)) {
    return { problem: "its front matter must be YAML keys (name:, description:)" };
  }
  const { name, description } = meta as Record<string, unknown>;
  if (typeof name !== "string" || name.trim() === "") return { problem: "its front matter has no name: add one" };
  if (!NAME.test(name.trim())) {
    return { problem: `name "${name}" must be up to 64 letters, digits, _ . or -, starting with a letter or digit` };
  }
  if (typeof description !== "string" || description.trim() === "") {
    return { problem: "its front matter has no description: add one line saying when to use the skill" };
  }
  const oneLine = description.replace(/\s+/g, " ").trim();
  if (oneLine.length > MAX_DESCRIPTION) {
    return { problem: `its description has ${oneLine.length} characters, more than ${MAX_DESCRIPTION}: shorten it` };
  }
  return { name: name.trim(), description: oneLine, body: text.slice(match[0].length).trim() };
}
