/**
 * Tool approval on the embedded backend: `agent.approvals` pauses matching tool calls with an
 * approval clarification, and `resume` with decisions approves, edits or rejects them.
 */
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createHarness } from "../../src/harness/index.js";
import type { Clarification, RunEvent } from "../../src/harness/types.js";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, last, memoryLogger, startHarness, type TestHarness } from "./helpers.js";

let mock: MockModel | undefined;
let subject: TestHarness | undefined;
afterEach(async () => {
  await subject?.harness.close();
  await mock?.close();
  subject = undefined;
});

/** Tools that record each call. */
function recordingTools() {
  const calls: Array<{ name: string; args: unknown }> = [];
  const make = (name: string, schema: z.ZodObject, result: (args: Record<string, unknown>) => string) =>
    tool(
      async (args: Record<string, unknown>) => {
        calls.push({ name, args });
        return result(args);
      },
      { name, description: `The ${name} tool.`, schema },
    );
  const tools = [
    make("send_email", z.object({ to: z.string(), body: z.string() }), (a) => `sent to ${a.to}`),
    make("send_sms", z.object({ number: z.string() }), (a) => `texted ${a.number}`),
    make("lookup_contact", z.object({ name: z.string() }), (a) => `${a.name}: ada@example.com`),
  ];
  return { tools, calls };
}

const APPROVALS = { send_email: { decisions: ["approve", "edit", "reject"] }, "send_*": {} };

async function start(approvals: Record<string, unknown> = APPROVALS) {
  mock = await startMockModel();
  const { tools, calls } = recordingTools();
  subject = await startHarness(mock, { agent: { approvals } }, tools);
  return { harness: subject.harness, calls, mock };
}

function approval(events: RunEvent[]): Clarification {
  const end = last(events);
  if (end.type !== "clarification" || !end.approval) throw new Error(`expected an approval, got ${JSON.stringify(end)}`);
  return end;
}

/** The tool results the model's latest request carried. */
function toolResults(m: MockModel): string[] {
  const req = m.requests.at(-1);
  return (req?.messages ?? []).filter((x) => x.role === "tool").map((x) => String(x.content));
}

const EMAIL_ARGS = { to: "ada@example.com", body: "Hello" };

describe("tool approval (embedded)", () => {
  it("pauses a matching call with the request, and approve runs it once with those args", async () => {
    const { harness, calls, mock } = await start();
    mock.enqueue({ toolCalls: [{ name: "send_email", id: "call_1", args: EMAIL_ARGS }] }, { text: "Sent." });
    const paused = approval(await collect(harness.run("t1", "email ada")));
    expect(paused.options).toEqual([]);
    expect(paused.question).toBe("Approve the tool call send_email?");
    expect(paused.approval?.requests).toEqual([
      { name: "send_email", args: EMAIL_ARGS, allowed: ["approve", "edit", "reject"], description: expect.any(String) },
    ]);
    expect(calls).toEqual([]);
    const info = await harness.getThread("t1");
    expect(info?.pending?.approval?.requests[0]?.name).toBe("send_email");

    const done = last(await collect(harness.resume("t1", { decisions: [{ type: "approve" }] })));
    expect(done).toMatchObject({ type: "done", text: "Sent." });
    expect(calls).toEqual([{ name: "send_email", args: EMAIL_ARGS }]);
    expect(toolResults(mock)).toEqual(["sent to ada@example.com"]);
  });

  it("reject with a message: the tool never runs and the model reads the message", async () => {
    const { harness, calls, mock } = await start();
    mock.enqueue({ toolCalls: [{ name: "send_email", id: "call_1", args: EMAIL_ARGS }] }, { text: "Not sent." });
    approval(await collect(harness.run("t2", "email ada")));
    const done = last(await collect(harness.resume("t2", { decisions: [{ type: "reject", message: "Not to Ada, ever." }] })));
    expect(done).toMatchObject({ type: "done", text: "Not sent." });
    expect(calls).toEqual([]);
    expect(toolResults(mock)).toEqual(["Not to Ada, ever."]);
  });

  it("edit runs the tool once with the edited args", async () => {
    const { harness, calls, mock } = await start();
    mock.enqueue({ toolCalls: [{ name: "send_email", id: "call_1", args: EMAIL_ARGS }] }, { text: "Sent." });
    approval(await collect(harness.run("t3", "email ada")));
    const edited = { to: "grace@example.com", body: "Hi Grace" };
    last(await collect(harness.resume("t3", { decisions: [{ type: "edit", args: edited }] })));
    expect(calls).toEqual([{ name: "send_email", args: edited }]);
    expect(toolResults(mock)).toEqual(["sent to grace@example.com"]);
  });

  it("two calls in one step: one approval with two requests; both approved both run", async () => {
    const { harness, calls, mock } = await start();
    mock.enqueue(
      {
        toolCalls: [
          { name: "send_email", id: "call_1", args: EMAIL_ARGS },
          { name: "send_sms", id: "call_2", args: { number: "+100" } },
        ],
      },
      { text: "Both sent." },
    );
    const paused = approval(await collect(harness.run("t4", "tell ada")));
    expect(paused.question).toBe("Approve 2 tool calls: send_email, send_sms?");
    expect(paused.approval?.requests.map((r) => [r.name, r.allowed])).toEqual([
      ["send_email", ["approve", "edit", "reject"]],
      ["send_sms", ["approve", "reject"]],
    ]);
    last(await collect(harness.resume("t4", { decisions: [{ type: "approve" }, { type: "approve" }] })));
    expect(calls.map((c) => c.name).sort()).toEqual(["send_email", "send_sms"]);
  });

  it("approve one, reject the other: decided separately; the model is asked again with the rejection", async () => {
    const { harness, calls, mock } = await start();
    mock.enqueue(
      {
        toolCalls: [
          { name: "send_email", id: "call_1", args: EMAIL_ARGS },
          { name: "send_sms", id: "call_2", args: { number: "+100" } },
        ],
      },
      { text: "Only the email then? Tell me." },
    );
    approval(await collect(harness.run("t5", "tell ada")));
    const decisions = [{ type: "approve" as const }, { type: "reject" as const, message: "No texts." }];
    const done = last(await collect(harness.resume("t5", { decisions })));
    expect(done).toMatchObject({ type: "done" });
    // langchain's middleware sends a step with any rejection back to the model: the approved
    // call is dropped from it (the model may call it again, and it is asked again).
    expect(calls).toEqual([]);
    expect(toolResults(mock)).toEqual(["No texts."]);
  });

  it("a tool no rule matches runs without a pause; ask_clarification still asks", async () => {
    const { harness, calls, mock } = await start({ "*": {} });
    mock.enqueue(
      { toolCalls: [{ name: "lookup_contact", id: "call_1", args: { name: "Ada" } }] },
      { toolCalls: [{ name: "ask_clarification", id: "call_2", args: { question: "Which Ada?", options: ["A", "B"] } }] },
      { text: "Ada A it is." },
    );
    // `*` matches every tool but ask_clarification: lookup_contact pauses, the question does not.
    const paused = approval(await collect(harness.run("t6", "find ada")));
    expect(paused.approval?.requests[0]?.name).toBe("lookup_contact");
    const asked = last(await collect(harness.resume("t6", { decisions: [{ type: "approve" }] })));
    expect(asked).toMatchObject({ type: "clarification", question: "Which Ada?", options: ["A", "B"] });
    expect((asked as Clarification).approval).toBeUndefined();
    expect(last(await collect(harness.resume("t6", "A")))).toMatchObject({ type: "done", text: "Ada A it is." });
    expect(calls).toEqual([{ name: "lookup_contact", args: { name: "Ada" } }]);

    await subject?.harness.close();
    await mock.close();
    const second = await start();
    second.mock.enqueue({ toolCalls: [{ name: "lookup_contact", id: "c", args: { name: "Bo" } }] }, { text: "Found." });
    expect(last(await collect(second.harness.run("t7", "find bo")))).toMatchObject({ type: "done", text: "Found." });
    expect(second.calls).toEqual([{ name: "lookup_contact", args: { name: "Bo" } }]);
  });

  it("a malformed answer is refused and the approval stays pending", async () => {
    const { harness, calls, mock } = await start();
    mock.enqueue({ toolCalls: [{ name: "send_sms", id: "call_1", args: { number: "+1" } }] }, { text: "ok" });
    approval(await collect(harness.run("t8", "text")));
    const wrongCount = last(await collect(harness.resume("t8", { decisions: [] })));
    expect(wrongCount).toMatchObject({ type: "error", code: "approval_invalid" });
    const notAllowed = last(await collect(harness.resume("t8", { decisions: [{ type: "edit", args: { number: "+2" } }] })));
    expect(notAllowed).toMatchObject({ type: "error", code: "approval_invalid", message: expect.stringContaining("send_sms") });
    expect((await harness.getThread("t8"))?.pending?.approval).toBeDefined();
    // A text answer rejects, with the text as what the model reads.
    last(await collect(harness.resume("t8", "please don't")));
    expect(calls).toEqual([]);
    expect(toolResults(mock)).toEqual(["please don't"]);
  });

  it("checkToolArgs names what is wrong with edited arguments", async () => {
    const { harness, mock } = await start();
    mock.enqueue({ toolCalls: [{ name: "send_email", id: "call_1", args: EMAIL_ARGS }] });
    const request = approval(await collect(harness.run("t9", "email"))).approval?.requests[0];
    if (!request) throw new Error("no request");
    expect(await harness.checkToolArgs(request, { to: "x@example.com", body: "hi" })).toBeUndefined();
    const missing = await harness.checkToolArgs(request, { to: "x@example.com" });
    expect(missing).toBe("Invalid arguments for send_email: body is missing.");
    const wrongType = await harness.checkToolArgs(request, { to: 5, body: "hi" });
    expect(wrongType).toBe("Invalid arguments for send_email: to must be a string.");
    expect(await harness.checkToolArgs(request, "to ada")).toMatch(/must be a JSON object/);
  });

  it("a pending approval survives a restart on the same SQLite file", async () => {
    mock = await startMockModel();
    const { tools, calls } = recordingTools();
    subject = await startHarness(mock, { agent: { approvals: APPROVALS } }, tools);
    mock.enqueue({ toolCalls: [{ name: "send_email", id: "call_1", args: EMAIL_ARGS }] });
    approval(await collect(subject.harness.run("t10", "email ada")));
    await subject.harness.close();

    const { logger } = memoryLogger();
    const again = await createHarness({ config: subject.config, baseDir: subject.baseDir, logger, tools });
    subject = { ...subject, harness: again };
    const pending = (await again.getThread("t10"))?.pending;
    expect(pending?.approval?.requests[0]).toMatchObject({ name: "send_email", args: EMAIL_ARGS });
    mock.enqueue({ text: "Sent after the restart." });
    const done = last(await collect(again.resume("t10", { decisions: [{ type: "approve" }] })));
    expect(done).toMatchObject({ type: "done", text: "Sent after the restart." });
    expect(calls).toEqual([{ name: "send_email", args: EMAIL_ARGS }]);
  });
});
