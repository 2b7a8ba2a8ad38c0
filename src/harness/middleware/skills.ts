/**
 * Skills: the agent's skills as a list (name and description) at the end of the system prompt,
 * and the tools that load one (`load_skill`, `read_skill_file`, skills/tools.ts). The list is the
 * same on every call, so the system prompt stays byte-identical and provider prompt caches keep
 * working; a skill's instructions reach the model only as the result of its `load_skill` call.
 */
import { createMiddleware } from "langchain";
import type { Skill } from "../skills/parse.js";
import { LOAD_SKILL, skillTools } from "../skills/tools.js";

export const SKILLS = "Skills";

/** The block the system prompt ends with. */
export function skillsPrompt(skills: readonly Skill[]): string {
  const lines = skills.map((s) => `- ${s.name}: ${s.description}`);
  return [
    "<skills>",
    `You have skills: instructions for particular tasks. When a task matches one, call ${LOAD_SKILL} with its name first, then follow what it says.`,
    ...lines,
    "</skills>",
  ].join("\n");
}

export function skillsMiddleware(skills: readonly Skill[]) {
  const block = skillsPrompt(skills);
  return createMiddleware({
    name: SKILLS,
    tools: skillTools(skills),
    wrapModelCall: (request, handler) => {
      const lead = request.systemMessage.text.trim() === "" ? "" : "\n\n";
      return handler({ ...request, systemMessage: request.systemMessage.concat(`${lead}${block}`) });
    },
  });
}
