/**
 * Guardrails, skills and token budgets in the middleware chain: where they sit in DeerFlow's
 * order, DeerFlow's three states (off, the built-in, your own middleware), and on by default only
 * when their settings are given.
 */
import { ChatOpenAI } from "@langchain/openai";
import { type AgentMiddleware, createMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { buildMiddlewareChain, createAntlerAgent } from "../../src/harness/index.js";

const names = (chain: AgentMiddleware[]) => chain.map((m) => m.name);
const model = new ChatOpenAI({ model: "m", apiKey: "sk-test", configuration: { baseURL: "http://127.0.0.1:9/v1" } });
const skill = { name: "haiku", description: "Write haiku.", dir: "/tmp", file: "/tmp/SKILL.md" };
const options = { guardrails: { deny: [{ tool: "run_shell" }] }, skills: [skill], budget: { maxToolCalls: 5 } };

describe("guardrails, skills and token budgets in the chain", () => {
  it("take their places in DeerFlow's order when every feature is on", () => {
    const all = {
      danglingToolCalls: true,
      guardrails: true,
      toolErrors: true,
      messageIdGuard: true,
      dynamicContext: true,
      skills: true,
      summarization: true,
      title: true,
      loopDetection: true,
      tokenBudget: true,
    };
    expect(names(buildMiddlewareChain(all, [], model, undefined, options))).toEqual([
      "DanglingToolCalls",
      "Guardrails",
      "ToolErrors",
      "MessageIdGuard",
      "DynamicContext",
      "Skills",
      "SummarizationMiddleware",
      "Title",
      "LoopDetection",
      "TokenBudget",
      "Clarification",
    ]);
  });

  it("are off without settings, on with them unless switched off, and an instance replaces the built-in", () => {
    expect(names(buildMiddlewareChain())).toEqual(["LoopDetection", "Clarification"]);
    expect(names(buildMiddlewareChain({}, [], undefined, undefined, options))).toEqual([
      "Guardrails",
      "Skills",
      "LoopDetection",
      "TokenBudget",
      "Clarification",
    ]);
    expect(
      names(buildMiddlewareChain({ guardrails: false, skills: false, tokenBudget: false }, [], undefined, undefined, options)),
    ).toEqual(["LoopDetection", "Clarification"]);
    const mine = createMiddleware({ name: "MyPolicy", wrapToolCall: (request, handler) => handler(request) });
    expect(names(buildMiddlewareChain({ guardrails: mine }))).toEqual(["MyPolicy", "LoopDetection", "Clarification"]);
    expect(names(buildMiddlewareChain({}, [], undefined, undefined, { skills: [] }))).not.toContain("Skills");
  });

  it("true without settings is an error that names them", () => {
    expect(() => buildMiddlewareChain({ guardrails: true })).toThrow(/the guardrails feature needs its settings \(guardrails\)/);
    expect(() => buildMiddlewareChain({ tokenBudget: true })).toThrow(/the token budget feature needs its settings \(budget\)/);
    expect(() => buildMiddlewareChain({ skills: true })).toThrow(/the skills feature needs its settings \(skills\)/);
  });

  it("featureOptions cannot be combined with a whole chain of your own", () => {
    expect(() => createAntlerAgent({ model, middleware: [], featureOptions: options })).toThrow(/cannot be combined/);
  });
});
