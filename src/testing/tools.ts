/**
 * Tools for tests. `recordingTools` record every call they run, for the contract's approval part:
 * the test reads what ran, with which arguments, and how often. Each `recordingTools()` has a list
 * of its own. `waitTool` is a tool call slow enough to talk to the agent while it runs.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { tool } from "langchain";
import { z } from "zod";

/** One call a recording tool ran. */
export interface RecordedCall {
  name: string;
  args: Record<string, unknown>;
}

export interface RecordingTools {
  /** `send_email` (`to`: an email address, `subject`: a string) and `send_fast` (`note`: a string). */
  tools: StructuredToolInterface[];
  /** Every call the tools ran, oldest first. */
  calls: RecordedCall[];
}

export function recordingTools(): RecordingTools {
  const calls: RecordedCall[] = [];
  const sendEmail = tool(
    async (args) => {
      calls.push({ name: "send_email", args });
      return `sent to ${args.to}`;
    },
    {
      name: "send_email",
      description: "Sends an email.",
      schema: z.object({ to: z.string().email(), subject: z.string() }),
    },
  );
  const sendFast = tool(
    async (args) => {
      calls.push({ name: "send_fast", args });
      return "sent fast";
    },
    { name: "send_fast", description: "Sends a note at once.", schema: z.object({ note: z.string() }) },
  );
  return { tools: [sendEmail, sendFast], calls };
}

/**
 * `wait` (`ms`: a number): waits that long, then answers `waited <ms> ms`. A cancelled run stops
 * it early (it throws the abort's reason), as a well-behaved slow tool does.
 */
export function waitTool(): StructuredToolInterface {
  return tool(
    async ({ ms }, config?: RunnableConfig) => {
      const signal = config?.signal;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal?.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            reject(signal.reason ?? new Error("aborted"));
          },
          { once: true },
        );
      });
      return `waited ${ms} ms`;
    },
    { name: "wait", description: "Waits a while.", schema: z.object({ ms: z.number().int().min(0) }) },
  );
}
