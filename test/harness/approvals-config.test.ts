/**
 * `agent.approvals` as config (defaults, globs, validation) and on the `graph` backend, whose
 * factory gets the approvals as a middleware that matches globs per model turn.
 */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/loader.js";
import { approvalRuleFor, createAgentBackend, type Harness, resolveInterruptOn } from "../../src/harness/index.js";
import { sentEmails } from "../fakes/langgraph/graphs.js";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, configFor, last, memoryLogger, tempDir } from "./helpers.js";

const FIXTURES = path.join(import.meta.dirname, "fixtures");

let mock: MockModel | undefined;
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  await mock?.close();
  harness = undefined;
});

/** The issues a config is refused with, as `path: message` lines. */
function refusal(agent: Record<string, unknown>): string[] {
  try {
    parseConfig(stringify({ agent }), {});
  } catch (err) {
    return ((err as { issues?: Array<{ path: string; message: string }> }).issues ?? []).map((i) => `${i.path}: ${i.message}`);
  }
  throw new Error("the config was accepted");
}

describe("agent.approvals config", () => {
  it("defaults: approve and reject, no approvers, ten minutes; on agents: too", () => {
    const config = parseConfig(
      stringify({
        agent: { approvals: { send_email: null, "send_*": { approvers: "U1, U2" } } },
        agents: { b: { approvals: { x: {} } } },
      }),
      {},
    );
    expect(config.agent.approvals.send_email).toEqual({ decisions: ["approve", "reject"], approvers: [], timeout_ms: 600_000 });
    expect(config.agent.approvals["send_*"]?.approvers).toEqual(["U1", "U2"]);
    expect(config.agents.b?.approvals.x?.decisions).toEqual(["approve", "reject"]);
    expect(parseConfig("{}", {}).agent.approvals).toEqual({});
  });

  it("refuses unknown decisions, an empty list, a bad timeout, unknown keys and odd tool names", () => {
    expect(refusal({ approvals: { t: { decisions: ["allow"] } } })).toEqual([
      expect.stringMatching(/^agent\.approvals\.t\.decisions\[0\]: must be one of/),
    ]);
    expect(refusal({ approvals: { t: { decisions: [] } } })).toEqual([
      "agent.approvals.t.decisions: needs at least one decision: approve, edit or reject",
    ]);
    expect(refusal({ approvals: { t: { timeout_ms: 0 } } })[0]).toMatch(/^agent\.approvals\.t\.timeout_ms: /);
    expect(refusal({ approvals: { t: { who: [] } } })[0]).toMatch(/^agent\.approvals\.t\.who: unknown key/);
    expect(refusal({ approvals: { "send email": {} } })[0]).toMatch(/must be a tool name or a glob/);
  });

  it("an exact name wins over globs; among globs the first listed wins; ask_clarification never", () => {
    const rules = {
      "send_*": { decisions: ["approve"] as const },
      "*": { decisions: ["reject"] as const },
      send_email: { decisions: ["edit"] as const },
    };
    expect(approvalRuleFor(rules, "send_email")?.decisions).toEqual(["edit"]);
    expect(approvalRuleFor(rules, "send_sms")?.decisions).toEqual(["approve"]);
    expect(approvalRuleFor(rules, "lookup")?.decisions).toEqual(["reject"]);
    expect(approvalRuleFor(rules, "ask_clarification")).toBeUndefined();
    expect(approvalRuleFor({ "send_*": { decisions: ["approve"] } }, "resend_x")).toBeUndefined();
    expect(approvalRuleFor({ "a.b": { decisions: ["approve"] } }, "aXb")).toBeUndefined();
    expect(resolveInterruptOn(rules, ["send_sms", "ask_clarification", "lookup"])).toEqual({
      send_sms: { allowedDecisions: ["approve"] },
      lookup: { allowedDecisions: ["reject"] },
    });
  });
});

describe("approvals on the graph backend", () => {
  it("the factory's middleware pauses matching calls and lets others run", async () => {
    mock = await startMockModel();
    sentEmails.length = 0;
    const config = configFor(mock, {
      storage: { path: path.join(tempDir(), "antler.db") },
      agent: { backend: "graph", graph: "./user-graphs.ts:approvingAgent", approvals: { "send_*": {} } },
    });
    harness = await createAgentBackend({ config, baseDir: FIXTURES, logger: memoryLogger().logger });
    mock.enqueue(
      { toolCalls: [{ name: "lookup_weather", id: "c0", args: { city: "Oslo" } }] },
      { toolCalls: [{ name: "send_email", id: "c1", args: { to: "ada@example.com", body: "Sunny" } }] },
      { text: "Told her." },
    );
    const paused = last(await collect(harness.run("g1", "tell ada the weather")));
    expect(paused).toMatchObject({
      type: "clarification",
      approval: { requests: [{ name: "send_email", allowed: ["approve", "reject"] }] },
    });
    const done = last(await collect(harness.resume("g1", { decisions: [{ type: "approve" }] })));
    expect(done).toMatchObject({ type: "done", text: "Told her." });
    expect(sentEmails).toEqual([{ to: "ada@example.com", body: "Sunny" }]);
  });
});
