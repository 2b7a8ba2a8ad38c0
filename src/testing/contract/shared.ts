/** What the contract's parts share: the running test's gateway, driver and model, and small helpers. */
import type { Gateway } from "../../gateway.js";
import type { ContractDriver, VisibleMessage } from "../driver.js";
import { eventually } from "../gateway.js";
import { contentText, type MockModel } from "../mock-model.js";
import type { RecordedCall } from "../tools.js";

/** The names of the contract's parts, one file each; `parts` and `skip` in the options take them. */
export const CONTRACT_PARTS = ["conversation", "delivery", "lifecycle", "routes", "group", "approval", "media"] as const;
/**
 * Parts that run only where a test file asks for them (`also`): the core does the same on every
 * platform, so a few platforms and backends prove it (follow-ups: Telegram, a Slack DM, the web chat in
 * Chromium, loopback without edits, the graph and remote backends).
 */
export const OPTIONAL_PARTS = ["followups"] as const;
export type ContractPart = (typeof CONTRACT_PARTS)[number] | (typeof OPTIONAL_PARTS)[number];

/** The running test's world: a whole gateway with the driver's channel, and the mock model behind it. */
export interface ContractContext {
  driver: ContractDriver;
  gateway: Gateway;
  model: MockModel;
  /** The gateway's folder: its database, and `files/` with a folder per thread. */
  dir: string;
  /** Calls the recording tools (tools.ts) ran in this test, oldest first. */
  toolCalls: RecordedCall[];
  /**
   * Why the agent lacks the recording tools and their approval rules (another backend, whose
   * agent Antler does not build); undefined when it has them.
   */
  noApprovals?: string;
  /**
   * Stops the gateway and starts a new one on the same storage, port, model and fake platform
   * (a process restart); resolves with the new context.
   */
  restart(): Promise<ContractContext>;
}

/** A check that finds the bot message showing exactly `text`. */
export const withText = (driver: ContractDriver, text: string) => () => driver.botMessages().find((m) => m.text === text);

/** The model asks a question with the options Red and Blue; resolves with the question as shown. */
export async function ask(driver: ContractDriver, model: MockModel, question: string): Promise<VisibleMessage> {
  model.enqueue({ toolCalls: [{ name: "ask_clarification", args: { question, options: ["Red", "Blue"] } }] });
  await driver.userSays("help me choose a colour");
  return eventually(() => driver.botMessages().find((m) => m.text.includes(question)), 15_000, "the question in the chat");
}

/** Content of the newest tool message the model received. */
export function lastToolResult(model: MockModel): string | undefined {
  const last = model.requests.at(-1);
  const tool = last?.messages.filter((m) => m.role === "tool").at(-1);
  return tool ? contentText(tool.content) : undefined;
}

/** How many model requests ended with the user saying `text`. */
export function timesHeard(model: MockModel, text: string): number {
  return model.requests.filter((r) => contentText(r.messages.at(-1)?.content) === text).length;
}

/** The channel under test, running in the gateway, and the sink the core gave it. */
export function channelUnderTest(ctx: ContractContext) {
  const slot = ctx.gateway.slot(ctx.driver.channelName);
  const channel = slot?.channel;
  const dispatcher = ctx.gateway.messageDispatcher;
  if (!slot || !channel || !dispatcher) throw new Error(`channel ${ctx.driver.channelName} is not loaded`);
  return { slot, channel, sink: dispatcher.sinkFor(slot) };
}
