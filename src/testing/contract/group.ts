/**
 * The channel contract's "who may answer" part: in a group, only the member whose message led to
 * a question, or a configured approver, may answer it, by button or by text. Anyone else is
 * refused (privately where the platform can), the question stays open and the model hears
 * nothing. Runs inside `channelContract`; a driver without a `group` skips it, saying so.
 */
import { describe, expect, it } from "vitest";
import type { ContractDriver, GroupDriver, GroupMember, VisibleMessage } from "../driver.js";
import { eventually, sleep } from "../gateway.js";
import { contentText, type MockModel } from "../mock-model.js";
import type { ContractContext } from "./shared.js";

const REFUSAL = /can answer (this|the open) question/;
const OPTIONS = ["Red", "Blue"];

/** The channel config with the group's approver listed, when the driver has a group. */
export function withApprover(driver: ContractDriver, config: Record<string, unknown>): Record<string, unknown> {
  return driver.group ? { ...config, approvers: [driver.group.userId("approver")] } : config;
}

export function groupContract(current: () => ContractContext): void {
  describe("who may answer in a group", () => {
    const setup = (skip: (note: string) => never) => {
      const { driver, model } = current();
      if (!driver.group) return skip(`the ${driver.channelName} driver has no group conversation`);
      return { driver, group: driver.group, model };
    };

    it("refuses another member's answer, keeps the question open, and the asker's answer works", async ({ skip }) => {
      const { driver, group, model } = setup(skip);
      const question = await askInGroup(group, model, "Which colour for the team?");
      const before = model.requests.length;
      await answer(driver, group, "other", "Blue");
      await eventually(() => seenBy(group, "other").some((t) => REFUSAL.test(t)), 15_000, "the refusal, shown to the clicker");
      if (driver.buttons ? group.privateClickNotice : group.privateTextNotice) {
        expect(seenBy(group, "asker").filter((t) => REFUSAL.test(t))).toEqual([]);
      }
      await sleep(300);
      expect(model.requests.length, "the model must not hear a refused answer").toBe(before);
      if (driver.buttons) expect(currentVersion(group, question)?.buttons).toEqual(OPTIONS);

      model.enqueue({ text: "Red for the team." });
      await answer(driver, group, "asker", "Red");
      await eventually(() => hasText(group, "Red for the team."), 15_000, "the reply after the asker's answer");
      expect(lastToolResult(model)).toBe("Red");
    });

    it("lets a configured approver answer someone else's question", async ({ skip }) => {
      const { driver, group, model } = setup(skip);
      await askInGroup(group, model, "Which colour should we ship?");
      model.enqueue({ text: "Approved: Blue." });
      await answer(driver, group, "approver", "Blue");
      await eventually(() => hasText(group, "Approved: Blue."), 15_000, "the reply after the approver's answer");
      expect(lastToolResult(model)).toBe("Blue");
      expect(seenBy(group, "approver").filter((t) => REFUSAL.test(t))).toEqual([]);
    });

    it("does not take another member's message as the answer to an open question", async ({ skip }) => {
      const { driver, group, model } = setup(skip);
      await askInGroup(group, model, "Which colour for the logo?");
      const before = model.requests.length;
      if (group.sharedThread) {
        // A new run on the asker's thread would abandon the question: refused, nothing runs.
        await group.says("other", "Green, please");
        await eventually(() => seenBy(group, "other").some((t) => REFUSAL.test(t)), 15_000, "the refusal");
        if (group.privateTextNotice) expect(seenBy(group, "asker").filter((t) => REFUSAL.test(t))).toEqual([]);
        await sleep(300);
        expect(model.requests.length).toBe(before);
      } else {
        // The other member has a conversation of their own: their message starts it.
        model.enqueue({ text: "Hello from your own thread." });
        await group.says("other", "Green, please");
        await eventually(() => hasText(group, "Hello from your own thread."), 15_000, "the other member's own reply");
        const request = model.requests.at(-1);
        expect(request?.messages.some((m) => m.role === "tool")).toBe(false);
        expect(contentText(request?.messages.at(-1)?.content)).toBe("Green, please");
      }
      model.enqueue({ text: "Logo in Red." });
      await answer(driver, group, "asker", "Red");
      await eventually(() => hasText(group, "Logo in Red."), 15_000, "the reply after the asker's answer");
      expect(lastToolResult(model)).toBe("Red");
    });
  });
}

async function askInGroup(group: GroupDriver, model: MockModel, question: string): Promise<VisibleMessage> {
  model.enqueue({ toolCalls: [{ name: "ask_clarification", args: { question, options: OPTIONS } }] });
  await group.says("asker", "help us choose a colour");
  return eventually(() => group.botMessages().find((m) => m.text.includes(question)), 15_000, "the question in the group");
}

/** Picks `option` the way the platform offers it: its button, or its number typed as text. */
async function answer(driver: ContractDriver, group: GroupDriver, member: GroupMember, option: string): Promise<void> {
  if (driver.buttons) await group.click(member, option);
  else await group.says(member, String(OPTIONS.indexOf(option) + 1));
}

/** Everything `member` can read in the group: what everyone sees, and what only they were shown. */
function seenBy(group: GroupDriver, member: GroupMember): string[] {
  return [...group.botMessages().map((m) => m.text), ...group.shownOnlyTo(member)];
}

function hasText(group: GroupDriver, text: string): boolean {
  return group.botMessages().some((m) => m.text === text);
}

function currentVersion(group: GroupDriver, message: VisibleMessage): VisibleMessage | undefined {
  return group.botMessages().find((m) => m.id === message.id);
}

function lastToolResult(model: MockModel): string | undefined {
  const tool = model.requests
    .at(-1)
    ?.messages.filter((m) => m.role === "tool")
    .at(-1);
  return tool ? contentText(tool.content) : undefined;
}
