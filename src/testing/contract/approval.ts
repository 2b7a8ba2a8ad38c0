/**
 * The contract's approval part: a tool call that needs a person's decision, decided in the chat.
 * Approve runs it once with the arguments shown; Reject (with a typed reason) never runs it and
 * the model reads the reason; Edit runs it once with arguments typed as JSON, after refusing
 * invalid ones; a non-approver in a group is refused; the deadline rejects; a restart in between
 * changes nothing. Where the platform has no buttons, the answers are typed.
 */
import { describe, expect, it } from "vitest";
import type { ContractDriver, GroupDriver, GroupMember, VisibleMessage } from "../driver.js";
import { eventually, sleep } from "../gateway.js";
import type { MockModel } from "../mock-model.js";
import { type ContractContext, lastToolResult, withText } from "./shared.js";

/** The `agent.approvals` the suite's gateway gets (the tools are in tools.ts). */
export const APPROVALS = {
  send_email: { decisions: ["approve", "reject", "edit"] },
  send_fast: { timeout_ms: 600 },
} as const;

const EMAIL = { to: "ana@example.com", subject: "Quarterly report" };
const REFUSAL = /can answer (this|the open) question/;
const EDIT_PROMPT = "Send the new arguments for send_email as a JSON object.";

/** The newest bot message showing a call of `tool` for approval. */
const callOf = (messages: VisibleMessage[], tool: string) =>
  messages.findLast((m) => m.text.includes(tool) && m.text.includes("wants to run with"));

/** The model calls `tool` with `args` when the user asks, then says `reply`; resolves with the call's message. */
async function pauseOn(
  ctx: ContractContext,
  reply: string,
  tool = "send_email",
  args: Record<string, unknown> = EMAIL,
): Promise<VisibleMessage> {
  const { driver, model } = ctx;
  model.enqueue({ toolCalls: [{ name: tool, args }] }, { text: reply });
  await driver.userSays(`please run ${tool}`);
  return eventually(() => callOf(driver.botMessages(), tool), 15_000, `the ${tool} call's message`);
}

/** Decides the open call the way the platform offers it: its button, or the word typed. */
async function decide(driver: ContractDriver, label: "Approve" | "Reject" | "Edit"): Promise<void> {
  if (driver.buttons) await driver.click(label);
  else await driver.userSays(label.toLowerCase());
}

function expectShown(driver: ContractDriver, call: VisibleMessage, args: Record<string, unknown>): void {
  for (const value of Object.values(args)) expect(call.text).toContain(String(value));
  if (driver.buttons) expect(call.buttons).toEqual(["Approve", "Reject", "Edit"]);
  else expect(call.text).toContain('"approve" or "reject <reason>"');
}

/** The test's context, or the test skipped with the reason its agent has no approvals. */
type Setup = (skip: (note: string) => never) => ContractContext;

export function approvalContract(current: () => ContractContext): void {
  describe("tool approval", () => {
    const setup: Setup = (skip) => {
      const ctx = current();
      if (ctx.noApprovals) return skip(ctx.noApprovals);
      return ctx;
    };
    decisionTests(setup);
    groupDecisionTests(setup);
    waitingTests(setup);
  });
}

/** Each decision: Approve, Reject with a reason, Edit. */
function decisionTests(setup: Setup): void {
  it("Approve runs the tool exactly once, with the arguments shown", async ({ skip }) => {
    const ctx = setup(skip);
    const { driver, model, toolCalls } = ctx;
    const call = await pauseOn(ctx, "Sent the report.");
    expectShown(driver, call, EMAIL);
    await sleep(200);
    expect(toolCalls, "nothing runs before the decision").toEqual([]);
    await decide(driver, "Approve");
    await eventually(withText(driver, "Sent the report."), 15_000, "the reply after Approve");
    expect(toolCalls).toEqual([{ name: "send_email", args: EMAIL }]);
    expect(lastToolResult(model)).toBe(`sent to ${EMAIL.to}`);
    if (driver.buttons && driver.streams) {
      const closed = await eventually(
        () => driver.botMessages().find((m) => m.id === call.id && m.buttons.length === 0),
        5_000,
        "the call's message without buttons",
      );
      expect(closed.text).toContain("Approved");
    }
  });

  it("Reject with a typed reason never runs the tool, and the model reads the reason", async ({ skip }) => {
    const ctx = setup(skip);
    const { driver, model, toolCalls } = ctx;
    await pauseOn(ctx, "Okay, I will not send it.");
    await driver.userSays("reject not today");
    await eventually(withText(driver, "Okay, I will not send it."), 15_000, "the reply after the rejection");
    await sleep(200);
    expect(toolCalls).toEqual([]);
    expect(lastToolResult(model)).toContain("not today");
  });

  it("Edit refuses invalid arguments, then runs the tool once with the edited ones", async ({ skip }) => {
    const ctx = setup(skip);
    const { driver, toolCalls } = ctx;
    await pauseOn(ctx, "Sent the edited one.");
    await decide(driver, "Edit");
    await eventually(withText(driver, EDIT_PROMPT), 15_000, "the edit prompt");
    await driver.userSays('{"to": "not an address", "subject": "Hi"}');
    await eventually(
      () => driver.botMessages().find((m) => m.text.startsWith("Invalid arguments for send_email")),
      15_000,
      "the schema's complaint",
    );
    expect(toolCalls).toEqual([]);
    const edited = { to: "bo@example.com", subject: "Hi" };
    await driver.userSays(JSON.stringify(edited));
    await eventually(withText(driver, "Sent the edited one."), 15_000, "the reply after the edit");
    expect(toolCalls).toEqual([{ name: "send_email", args: edited }]);
  });
}

/** Who may decide in a group. */
function groupDecisionTests(setup: Setup): void {
  it("refuses a non-approver's decision in a group and changes nothing; an approver's works", async ({ skip }) => {
    const { driver, model, toolCalls } = setup(skip);
    const group = driver.group;
    if (!group) return skip(`the ${driver.channelName} driver has no group conversation`);
    if (!driver.buttons && !group.sharedThread) return skip("without buttons, each member's words go to their own conversation");
    const call = await pauseInGroup(group, model);
    const before = model.requests.length;
    await decideAs(driver, group, "other");
    await eventually(() => seenBy(group, "other").some((t) => REFUSAL.test(t)), 15_000, "the refusal");
    await sleep(300);
    expect(toolCalls).toEqual([]);
    expect(model.requests.length, "the model must not hear a refused decision").toBe(before);
    if (driver.buttons) expect(group.botMessages().find((m) => m.id === call.id)?.buttons).toEqual(call.buttons);
    await decideAs(driver, group, "approver");
    await eventually(() => group.botMessages().some((m) => m.text === "Sent to the team."), 15_000, "the reply");
    expect(toolCalls).toEqual([{ name: "send_email", args: EMAIL }]);
  });
}

/** A call nobody decides: its deadline, and a restart while it waits. */
function waitingTests(setup: Setup): void {
  it("rejects a call nobody decided by its deadline, and the model reads why", async ({ skip }) => {
    const ctx = setup(skip);
    const { driver, model, toolCalls } = ctx;
    await pauseOn(ctx, "Nobody answered, so I did not send it.", "send_fast", { note: "hi" });
    await eventually(withText(driver, "Nobody answered, so I did not send it."), 15_000, "the reply after the deadline");
    expect(toolCalls).toEqual([]);
    expect(lastToolResult(model)).toContain("No decision within");
  });

  it("keeps a call waiting across a restart; decided afterwards, the run resumes and the tool runs once", async ({ skip }) => {
    const ctx = setup(skip);
    await pauseOn(ctx, "Sent after the restart.");
    const { driver, model, toolCalls } = await ctx.restart();
    await decide(driver, "Approve");
    await eventually(withText(driver, "Sent after the restart."), 15_000, "the reply after the restart");
    await sleep(300);
    expect(toolCalls).toEqual([{ name: "send_email", args: EMAIL }]);
    expect(lastToolResult(model)).toBe(`sent to ${EMAIL.to}`);
    expect(driver.botMessages().filter((m) => m.text === "Sent after the restart.")).toHaveLength(1);
  });
}

async function pauseInGroup(group: GroupDriver, model: MockModel): Promise<VisibleMessage> {
  model.enqueue({ toolCalls: [{ name: "send_email", args: EMAIL }] }, { text: "Sent to the team." });
  await group.says("asker", "please email the report");
  return eventually(() => callOf(group.botMessages(), "send_email"), 15_000, "the call's message in the group");
}

async function decideAs(driver: ContractDriver, group: GroupDriver, member: GroupMember): Promise<void> {
  if (driver.buttons) await group.click(member, "Approve");
  else await group.says(member, "approve");
}

/** Everything `member` can read in the group: what everyone sees, and what only they were shown. */
function seenBy(group: GroupDriver, member: GroupMember): string[] {
  return [...group.botMessages().map((m) => m.text), ...group.shownOnlyTo(member)];
}
