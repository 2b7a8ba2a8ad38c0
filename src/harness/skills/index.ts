/** Skills: SKILL.md folders the agent lists and loads on demand (README.md). */
export { type AgentSkillsOptions, agentSkills, findSkills } from "./catalog.js";
export { type ParsedSkill, parseSkill, SKILL_FILE, type Skill } from "./parse.js";
export { insideSkill, LOAD_SKILL, READ_SKILL_FILE, skillTools } from "./tools.js";
