/**
 * Skills (`skills.paths`, `tenants.<name>.skills`, `agent.skills`): SKILL.md parsing and the
 * errors a broken one gives at start, which skills an agent of which tenant gets, and on the mock
 * model that a skill's instructions reach the model only once the agent loads it.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/loader.js";
import type { AppConfig } from "../../src/config/schema.js";
import { AgentDirectory, type AgentHarness, agentSkills, createHarness } from "../../src/harness/index.js";
import { parseSkill, skillTools } from "../../src/harness/skills/index.js";
import { type ChatCompletionRequest, contentText, type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";
import { collect, configFor, last, memoryLogger, tempDir } from "./helpers.js";

let mock: MockModel;
let harness: AgentHarness | undefined;
let directory: AgentDirectory | undefined;
beforeEach(async () => {
  mock = await startMockModel();
});
afterEach(async () => {
  await harness?.close();
  await directory?.close();
  harness = undefined;
  directory = undefined;
  await mock.close();
});

/** Writes a skill folder `<root>/<folder>` with its SKILL.md and other files. */
function skill(root: string, folder: string, md: string, files: Record<string, string> = {}): string {
  const dir = path.join(root, folder);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "SKILL.md"), md);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}
const md = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;

/** Everything the model was sent in one request, as one string. */
const everything = (req: ChatCompletionRequest | undefined) =>
  (req?.messages ?? []).map((m) => contentText(m.content)).join("\n");
const systemOf = (req: ChatCompletionRequest | undefined) => contentText(req?.messages.find((m) => m.role === "system")?.content);

describe("SKILL.md", () => {
  it("parses front matter and body; says what is wrong otherwise", () => {
    expect(parseSkill(md("haiku", "Write haiku.\n  In three lines.", "Count syllables."))).toEqual({
      name: "haiku",
      description: "Write haiku. In three lines.",
      body: "Count syllables.",
    });
    expect(parseSkill("just instructions")).toEqual({ problem: expect.stringContaining("has no front matter") });
    expect(parseSkill("---\ndescription: x\n---\nbody")).toEqual({ problem: "its front matter has no name: add one" });
    expect(parseSkill("---\nname: a\n---\nbody")).toEqual({ problem: expect.stringContaining("has no description") });
    expect(parseSkill("---\nname: [a\n---\n")).toEqual({ problem: expect.stringContaining("not valid YAML") });
    expect(parseSkill(md("no spaces allowed", "x", ""))).toEqual({
      problem: expect.stringContaining("must be up to 64 letters"),
    });
  });
});

describe("which skills an agent gets", () => {
  function config(extra: Record<string, unknown>): AppConfig {
    return parseConfig(stringify({ models: [mockModelConfig(mock)], ...extra }), {});
  }

  it("every shared skill by default, the named ones in their order, a tenant's own on top", async () => {
    const base = tempDir();
    skill(path.join(base, "shared"), "haiku", md("haiku", "Write haiku.", "shared haiku"));
    skill(path.join(base, "shared"), "review", md("review", "Review code.", "review"));
    skill(path.join(base, "acme"), "haiku", md("haiku", "Acme's haiku.", "acme haiku"));
    skill(path.join(base, "acme"), "invoices", md("invoices", "Acme's invoices.", "invoices"));
    const c = config({
      skills: { paths: ["./shared"] },
      tenants: { acme: { skills: ["./acme"] } },
      agents: { picky: { skills: ["review", "haiku"] } },
    });
    const names = async (settings: AppConfig["agent"], tenant?: string) =>
      (await agentSkills(c, settings, { baseDir: base, ...(tenant ? { tenant } : {}) })).map(
        (s) => `${s.name}: ${s.description}`,
      );
    expect(await names(c.agent)).toEqual(["haiku: Write haiku.", "review: Review code."]);
    expect(await names(c.agent, "acme")).toEqual(["haiku: Acme's haiku.", "review: Review code.", "invoices: Acme's invoices."]);
    expect(await names(c.agents.picky!)).toEqual(["review: Review code.", "haiku: Write haiku."]);
    expect(await names({ ...c.agent, skills: [] })).toEqual([]);
  });

  it("a broken SKILL.md, a missing folder, a name twice or an unknown name stops the start, naming the key and the file", async () => {
    const base = tempDir();
    const broken = skill(path.join(base, "skills"), "broken", "no front matter here");
    skill(path.join(base, "skills"), "nameless", "---\ndescription: x\n---\n");
    skill(path.join(base, "skills"), "one", md("same", "first", ""));
    skill(path.join(base, "skills"), "two", md("same", "second", ""));
    const c = config({ skills: { paths: ["./skills", "./missing"] }, agent: { skills: ["nope"] } });
    const error = await agentSkills(c, c.agent, { baseDir: base }).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    const lines = (error as Error).message.split("\n");
    expect(lines).toEqual([
      `skills.paths[0]: ${path.join(broken, "SKILL.md")} has no front matter: start it with a --- line, name: and description:, then another --- line`,
      `skills.paths[0]: ${path.join(base, "skills", "nameless", "SKILL.md")} its front matter has no name: add one`,
      `skills.paths[0]: ${path.join(base, "skills", "two", "SKILL.md")} and ${path.join(base, "skills", "one", "SKILL.md")} are both named "same": rename one`,
      `skills.paths[1]: ${path.join(base, "missing")} is not a folder: create it or fix the path (relative to ${base})`,
      `agent.skills[0]: no skill named "nope" in skills.paths (known: same)`,
    ]);
    // Through the harness too: the agent does not start.
    await expect(createHarness({ config: c, baseDir: base, logger: memoryLogger().logger })).rejects.toThrow(
      /skills\.paths\[0\]: .*broken\/SKILL\.md has no front matter/,
    );
  });
});

describe("a skill on the mock model", () => {
  it("its instructions reach the model only after load_skill; its files through read_skill_file", async () => {
    const base = tempDir();
    skill(path.join(base, "skills"), "haiku", md("haiku", "Write a haiku on request.", "HAIKU-RULES: 5, 7, 5 syllables."), {
      "examples/autumn.md": "AUTUMN-EXAMPLE",
    });
    skill(path.join(base, "skills"), "review", md("review", "Review code.", "REVIEW-RULES"));
    const config = configFor(mock, { skills: { paths: ["./skills"] } });
    harness = await createHarness({ config, baseDir: base, logger: memoryLogger().logger });
    mock.enqueue(
      { text: "Sure." },
      { toolCalls: [{ name: "load_skill", args: { name: "haiku" } }] },
      { toolCalls: [{ name: "read_skill_file", args: { name: "haiku", path: "examples/autumn.md" } }] },
      { text: "Leaves fall..." },
    );
    await collect(harness.run("t1", "hello"));
    const done = last(await collect(harness.run("t1", "write a haiku")));
    expect(done).toMatchObject({ type: "done", text: "Leaves fall..." });

    const [first, beforeLoad, afterLoad, afterRead] = mock.requests;
    for (const req of [first, beforeLoad]) {
      expect(systemOf(req)).toContain("- haiku: Write a haiku on request.");
      expect(systemOf(req)).toContain("- review: Review code.");
      expect(everything(req)).not.toContain("HAIKU-RULES");
    }
    expect(first?.tools?.map((t) => t.function.name)).toEqual(expect.arrayContaining(["load_skill", "read_skill_file"]));
    expect(systemOf(afterLoad), "the system prompt does not change").toBe(systemOf(first));
    const loaded = afterLoad?.messages.at(-1);
    expect(loaded).toMatchObject({ role: "tool" });
    expect(contentText(loaded?.content)).toContain("HAIKU-RULES: 5, 7, 5 syllables.");
    expect(contentText(loaded?.content)).toContain("examples/autumn.md");
    expect(everything(afterLoad)).not.toContain("REVIEW-RULES");
    expect(contentText(afterRead?.messages.at(-1)?.content)).toBe("AUTUMN-EXAMPLE");
  });

  it("read_skill_file stays inside the skill's folder", async () => {
    const base = tempDir();
    const dir = skill(base, "haiku", md("haiku", "h", "body"), { "notes.txt": "NOTES" });
    writeFileSync(path.join(base, "secret.txt"), "SECRET");
    symlinkSync(path.join(base, "secret.txt"), path.join(dir, "link.txt"));
    const [, read] = skillTools([{ name: "haiku", description: "h", dir, file: path.join(dir, "SKILL.md") }]);
    const ask = (p: string) => read!.invoke({ name: "haiku", path: p }) as Promise<string>;
    expect(await ask("notes.txt")).toBe("NOTES");
    for (const outside of ["../secret.txt", path.join(base, "secret.txt"), "link.txt", "."]) {
      expect(await ask(outside), outside).toMatch(/^The skill "haiku" has no file/);
    }
    expect(await read!.invoke({ name: "other", path: "notes.txt" })).toBe('There is no skill named "other". Skills: haiku.');
  });

  it("a tenant's agent lists its tenant's skills; the default tenant's does not", async () => {
    const base = tempDir();
    skill(path.join(base, "acme"), "invoices", md("invoices", "Acme's invoices.", "INVOICE-RULES"));
    const config = parseConfig(
      stringify({
        storage: { path: "./antler.db" },
        models: [mockModelConfig(mock)],
        tenants: { acme: { skills: ["./acme"] } },
      }),
      {},
    );
    directory = await AgentDirectory.open({ config, baseDir: base, logger: memoryLogger().logger }, ["default", "acme"]);
    await collect((await directory.harness("acme", "default")).run("a1", "hi"));
    await collect((await directory.harness("default", "default")).run("d1", "hi"));
    expect(systemOf(mock.requests[0])).toContain("- invoices: Acme's invoices.");
    expect(systemOf(mock.requests[1])).not.toContain("invoices");
    expect(mock.requests[1]?.tools?.map((t) => t.function.name)).not.toContain("load_skill");
  });
});
