/**
 * Tools that record every call they run, for the contract's approval part: the test reads what
 * ran, with which arguments, and how often. Each `recordingTools()` has a list of its own.
 */
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
