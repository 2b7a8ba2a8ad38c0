/**
 * The agent's way into its skills: `load_skill` gives a skill's instructions and the list of its
 * other files, `read_skill_file` reads one of those. Both know only the skills the agent was
 * given, and a path that leaves the skill's folder (`..`, an absolute path, a link pointing out)
 * is refused. Files are read when asked for, so an edited skill needs no restart (its name and
 * description, in the prompt, are read at start).
 */
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { tool } from "langchain";
import { z } from "zod";
import { parseSkill, SKILL_FILE, type Skill } from "./parse.js";

export const LOAD_SKILL = "load_skill";
export const READ_SKILL_FILE = "read_skill_file";

/** Characters `read_skill_file` returns at most per call; the rest is read with `offset`. */
const MAX_CHARS = 20_000;
/** Files `load_skill` lists at most; the others are still readable by path. */
const MAX_FILES = 200;

const LoadArgs = z.object({ name: z.string().describe("The skill's name, as the list of skills gives it.") });
const ReadArgs = z.object({
  name: z.string().describe("The skill's name."),
  path: z.string().describe("The file's path inside the skill, as load_skill lists it."),
  offset: z.number().int().min(0).optional().describe("Character to start at, to read on where a long file was cut."),
});

/** `load_skill` and `read_skill_file` over `skills`. */
export function skillTools(skills: readonly Skill[]) {
  const byName = new Map(skills.map((s) => [s.name, s]));
  const unknown = (name: string) => `There is no skill named "${name}". Skills: ${[...byName.keys()].join(", ")}.`;
  const loadSkill = tool(
    async ({ name }) => {
      const skill = byName.get(name);
      if (!skill) return unknown(name);
      const parsed = parseSkill(await readFile(skill.file, "utf8"));
      if ("problem" in parsed) return `The skill "${name}" cannot be loaded: its ${SKILL_FILE} ${parsed.problem}.`;
      const files = await listFiles(skill.dir);
      const shown =
        files.slice(0, MAX_FILES).join(", ") + (files.length > MAX_FILES ? `, and ${files.length - MAX_FILES} more` : "");
      const more = files.length > 0 ? `\n\nFiles of this skill (read one with ${READ_SKILL_FILE}): ${shown}` : "";
      return `Skill "${name}" instructions:\n\n${parsed.body}${more}`;
    },
    {
      name: LOAD_SKILL,
      description:
        "Load the instructions of one of your skills (listed in your instructions) by its name. Load a skill before a task it covers, then follow it.",
      schema: LoadArgs,
    },
  );
  const readSkillFile = tool(
    async (args) => {
      const skill = byName.get(args.name);
      if (!skill) return unknown(args.name);
      const file = await insideSkill(skill.dir, args.path);
      if (!file)
        return `The skill "${args.name}" has no file "${args.path}". Its files: ${(await listFiles(skill.dir)).join(", ") || "none"}.`;
      const text = await readFile(file, "utf8");
      if (text.includes("\u0000")) return `${args.path} is not a text file; it cannot be read here.`;
      const start = Math.min(args.offset ?? 0, text.length);
      const end = Math.min(text.length, start + MAX_CHARS);
      const part = text.slice(start, end);
      return end < text.length ? `${part}\n\n[… ${text.length - end} more characters: read on with offset ${end}]` : part;
    },
    {
      name: READ_SKILL_FILE,
      description: "Read a file that belongs to one of your skills (load_skill lists them), e.g. a reference or a template.",
      schema: ReadArgs,
    },
  );
  return [loadSkill, readSkillFile] as const;
}

/** The real path of `relative` when it is a file inside `dir` (links followed); else undefined. */
export async function insideSkill(dir: string, relative: string): Promise<string | undefined> {
  if (relative.trim() === "" || path.isAbsolute(relative)) return undefined;
  try {
    const root = await realpath(dir);
    const file = await realpath(path.resolve(root, relative));
    const rel = path.relative(root, file);
    if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
    return (await stat(file)).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}

/** The skill's files besides its SKILL.md, relative and `/`-separated, hidden ones left out. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
    .filter((rel) => rel !== SKILL_FILE && !rel.split("/").some((part) => part.startsWith(".")))
    .sort();
}
