/**
 * Guardrails (`agent.features.guardrails`, `agent.guardrails`): the rules, their config checks,
 * and the embedded agent on the mock model, where a refused call does not run, the model reads
 * why as the call's result and the run goes on; a `use:` policy (function, object, class) loaded
 * by reflection, and what a policy that throws does.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { tool } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { z } from "zod";
import { parseConfig } from "../../src/config/loader.js";
import { checkRules, type GuardedCall } from "../../src/harness/guardrails/index.js";
import { type AgentHarness, createHarness } from "../../src/harness/index.js";
import type { RunEvent } from "../../src/harness/types.js";
import { contentText, type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, configFor, last, memoryLogger, tempDir } from "./helpers.js";

let mock: MockModel;
let harness: AgentHarness | undefined;
const ran: string[] = [];
const shell = tool(
  async ({ command }) => {
    ran.push(command);
    return `ran: ${command}`;
  },
  { name: "run_shell", description: "Run a shell command.", schema: z.object({ command: z.string() }) },
);
const readNotes = tool(async () => "the notes", { name: "read_notes", description: "Read the notes.", schema: z.object({}) });

beforeEach(async () => {
  mock = await startMockModel();
  ran.length = 0;
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await mock.close();
});

/** A harness with `guardrails` on, its config file's folder `baseDir`. */
async function guarded(guardrails: Record<string, unknown>, baseDir = tempDir()) {
  const config = configFor(mock, { agent: { features: { guardrails: true }, guardrails } });
  const { logger, logs } = memoryLogger();
  harness = await createHarness({ config, baseDir, logger, tools: [shell, readNotes] });
  return { harness, logs };
}

const shellCalls = (...commands: string[]) => ({
  toolCalls: commands.map((command) => ({ name: "run_shell", args: { command } })),
});
const toolResults = (i: number) =>
  (mock.requests[i]?.messages ?? []).filter((m) => m.role === "tool").map((m) => contentText(m.content));
const ends = (events: RunEvent[]) =>
  events.flatMap((e) => (e.type === "tool_end" ? [{ name: e.name, error: e.error, output: e.output }] : []));

const call = (tool: string, args: Record<string, unknown> = {}): GuardedCall => ({ tool, args, user: {} });

describe("the rules", () => {
  it("deny by tool glob and argument patterns: globs match the whole value, /regex/ anywhere", () => {
    const rules = {
      deny: [
        { tool: "run_*", args: { command: ["rm -rf*", "/\\bsudo\\b/i"] } },
        { tool: "delete_everything", reason: "Never." },
      ],
    };
    expect(checkRules(rules, call("run_shell", { command: "rm -rf /" }))).toEqual({
      allow: false,
      reason: "The policy does not allow run_shell with this command.",
    });
    expect(checkRules(rules, call("run_shell", { command: "cd / && rm -rf ." })).allow, "a glob is anchored").toBe(true);
    expect(checkRules(rules, call("run_shell", { command: "echo hi && SUDO reboot" })).allow).toBe(false);
    expect(checkRules(rules, call("run_shell", { command: "pseudonym" })).allow).toBe(true);
    expect(checkRules(rules, call("run_shell", {})).allow, "a missing argument matches nothing").toBe(true);
    expect(checkRules(rules, call("delete_everything"))).toEqual({ allow: false, reason: "Never." });
    expect(checkRules(rules, call("read_file", { command: "rm -rf /" })).allow).toBe(true);
  });

  it("an allow list lets only what it matches run; deny wins; other values match as JSON", () => {
    const rules = {
      allow: [{ tool: "read_*" }, { tool: "fetch", args: { url: "https://docs.example.com/*" } }],
      deny: [{ tool: "read_secrets" }],
    };
    expect(checkRules(rules, call("read_notes")).allow).toBe(true);
    expect(checkRules(rules, call("read_secrets")).allow).toBe(false);
    expect(checkRules(rules, call("fetch", { url: "https://docs.example.com/a" })).allow).toBe(true);
    expect(checkRules(rules, call("fetch", { url: "https://evil.example.com/" }))).toEqual({
      allow: false,
      reason: "fetch is not allowed here with these arguments.",
    });
    expect(
      checkRules({ deny: [{ tool: "send", args: { to: '["*@rival.com"]' } }] }, call("send", { to: ["x@rival.com"] })).allow,
    ).toBe(false);
  });
});

describe("the config", () => {
  const refused = (agent: Record<string, unknown>) => () => parseConfig(stringify({ agent }), {});

  it("is off by default, needs rules when on, and checks its patterns", () => {
    expect(parseConfig(stringify({}), {}).agent.features.guardrails).toBe(false);
    expect(refused({ features: { guardrails: true } })).toThrow(
      /agent\.guardrails: is required when features\.guardrails is true/,
    );
    expect(refused({ features: { guardrails: true }, guardrails: {} })).toThrow(/agent\.guardrails: has no rules/);
    expect(refused({ guardrails: { deny: [{ tool: "run_shell", args: { command: "/(unclosed/" } }] } })).toThrow(
      /agent\.guardrails\.deny\[0\]\.args\.command: is not a valid regular expression/,
    );
    expect(refused({ guardrails: { deny: ["run shell"] } })).toThrow(
      /agent\.guardrails\.deny\[0\]\.tool: must be a tool name or a glob/,
    );
    const ok = parseConfig(stringify({ agent: { guardrails: { deny: ["run_*", { tool: "x", args: { a: "b" } }] } } }), {});
    expect(ok.agent.guardrails?.deny).toEqual([{ tool: "run_*" }, { tool: "x", args: { a: ["b"] } }]);
    expect(ok.agent.guardrails?.fail_closed).toBe(true);
  });
});

describe("a guarded agent", () => {
  it("does not run a denied call; the model reads the refusal as its result and the run goes on", async () => {
    const { logs } = await guarded({ deny: [{ tool: "run_shell", args: { command: "rm -rf*" } }] });
    mock.enqueue(shellCalls("rm -rf /tmp/work", "ls"), { text: "I listed the folder; deleting it is not allowed." });
    const events = await collect(harness!.run("t1", "clean up"));

    expect(ran).toEqual(["ls"]);
    expect(toolResults(1)).toEqual([
      "Refused by policy: run_shell was not run. The policy does not allow run_shell with this command. Do not retry it another way; go on without it, or tell the user it is not allowed.",
      "ran: ls",
    ]);
    expect(ends(events).map((e) => e.error)).toEqual([true, false]);
    expect(last(events)).toMatchObject({ type: "done", text: "I listed the folder; deleting it is not allowed." });
    const refusal = logs.find((l) => l.msg === "guardrails refused a tool call");
    expect(refusal).toMatchObject({ tool: "run_shell" });
    expect(JSON.stringify(logs), "arguments stay out of the log").not.toContain("rm -rf /tmp/work");
  });

  it("with an allow list, other tools are refused, and ask_clarification still asks", async () => {
    await guarded({ allow: ["read_*"] });
    mock.enqueue(
      {
        toolCalls: [
          { name: "read_notes", args: {} },
          { name: "run_shell", args: { command: "ls" } },
        ],
      },
      { toolCalls: [{ name: "ask_clarification", args: { question: "Which folder?" } }] },
    );
    const events = await collect(harness!.run("t2", "look around"));
    expect(ran).toEqual([]);
    expect(toolResults(1)[0]).toBe("the notes");
    expect(toolResults(1)[1]).toContain("run_shell is not allowed here");
    expect(last(events)).toMatchObject({ type: "clarification", question: "Which folder?" });
  });
});

describe("a policy of your own (use:)", () => {
  it("a function, relative to the config file, sees the call and who asked; its reason reaches the model", async () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, "policy.mjs"),
      `export const seen = [];
       export function policy(call) {
         seen.push(call);
         return call.args.command.includes("prod") ? { allow: false, reason: "Production is off limits." } : true;
       }`,
    );
    await guarded({ use: "./policy.mjs:policy" }, dir);
    mock.enqueue(shellCalls("deploy prod", "deploy staging"), { text: "Deployed staging only." });
    const user = { id: "42", name: "Ada", personId: "p-default-tg-42", channel: "tg", chatType: "direct" };
    await collect(harness!.run("t3", "deploy", { user }));

    expect(ran).toEqual(["deploy staging"]);
    expect(toolResults(1)[0]).toContain("run_shell was not run. Production is off limits.");
    const { seen } = (await import(path.join(dir, "policy.mjs"))) as { seen: GuardedCall[] };
    expect(seen[0]).toMatchObject({
      tool: "run_shell",
      args: { command: "deploy prod" },
      threadId: "t3",
      user: { user_id: "p-default-tg-42", channel_user_id: "42", channel_name: "tg", chat_type: "direct" },
    });
    expect(seen[0]?.id).toEqual(expect.any(String));
  });

  it("a class is built once with options; the lists are asked first", async () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, "policy-class.mjs"),
      `export class Blocklist {
         constructor(options) { this.blocked = options.blocked; }
         evaluate(call) { return { allow: !this.blocked.includes(call.args.command) }; }
       }`,
    );
    await guarded({ use: "./policy-class.mjs:Blocklist", options: { blocked: ["whoami"] }, deny: ["read_notes"] }, dir);
    mock.enqueue(shellCalls("whoami", "date"), { toolCalls: [{ name: "read_notes", args: {} }] }, { text: "ok" });
    await collect(harness!.run("t4", "who"));
    expect(ran).toEqual(["date"]);
    expect(toolResults(1)[0]).toContain("The policy does not allow this run_shell call.");
    expect(toolResults(2)[2]).toContain("The policy does not allow read_notes.");
  });

  it("a policy that throws refuses the call, unless fail_closed is false", async () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, "broken.mjs"),
      `export const broken = { evaluate() { throw new Error("policy server down"); } };`,
    );
    const { logs } = await guarded({ use: "./broken.mjs:broken" }, dir);
    mock.enqueue(shellCalls("ls"), { text: "could not" });
    await collect(harness!.run("t5", "ls"));
    expect(ran).toEqual([]);
    expect(toolResults(1)[0]).toContain("The policy could not check this call.");
    expect(logs.some((l) => l.msg === "the guardrails policy failed")).toBe(true);
    await harness!.close();

    await guarded({ use: "./broken.mjs:broken", fail_closed: false }, dir);
    mock.enqueue(shellCalls("ls"), { text: "listed" });
    await collect(harness!.run("t6", "ls"));
    expect(ran).toEqual(["ls"]);
  });

  it("a use: that does not load, or is not a policy, stops the start with the key to fix", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "not-policy.mjs"), "export const answer = 42;");
    await expect(guarded({ use: "./nope.mjs:policy" }, dir)).rejects.toThrow(
      /agent\.guardrails\.use: Cannot import "\.\/nope\.mjs:policy"/,
    );
    await expect(guarded({ use: "./not-policy.mjs:answer" }, dir)).rejects.toThrow(/agent\.guardrails\.use: .* is not a policy/);
  });
});
