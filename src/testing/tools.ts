/**
 * Tools for tests of agents:
 * - `recordingTools()` record every call they run, for the contract's approval part: the test
 *   reads what ran, with which arguments, and how often. Each has a list of its own.
 * - `progressTool()` works in steps and reports each through LangGraph's custom stream, the way
 *   a long tool shows the user where it is (`progress` run events).
 * - `waitTool()` is a tool call slow enough to talk to the agent while it runs.
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

/** The name of `progressTool()`'s tool. */
export const PROGRESS_TOOL = "run_steps";

export interface ProgressToolOptions {
  /** Steps when the call does not say (default 3). */
  steps?: number;
  /** Wait between steps when the call does not say, in ms (default 50). */
  delayMs?: number;
  /** Name its call in each report (`id: config.toolCall.id`), as a tool run beside others should. */
  reportId?: boolean;
}

/** What `progressTool()` reports before step `step` of `steps`. */
export function progressText(step: number, steps: number): string {
  return `Running step ${step} of ${steps}`;
}

/**
 * `run_steps {steps?, delay_ms?}`: runs `steps` steps with `delay_ms` between them; before each it
 * reports `progressText(i, steps)` as `config.writer({ progress })`, Antler's convention for a
 * tool's progress. Returns `ran <steps> steps`; stops early when the run is cancelled.
 */
export function progressTool(options: ProgressToolOptions = {}): StructuredToolInterface {
  return tool(
    async (args, config) => {
      const steps = args.steps ?? options.steps ?? 3;
      const delayMs = args.delay_ms ?? options.delayMs ?? 50;
      const writer = (config as { writer?: (chunk: unknown) => void } | undefined)?.writer;
      const id = options.reportId ? { id: config?.toolCall?.id } : {};
      for (let step = 1; step <= steps; step++) {
        writer?.({ progress: progressText(step, steps), ...id });
        await pause(delayMs, config?.signal);
      }
      return `ran ${steps} steps`;
    },
    {
      name: PROGRESS_TOOL,
      description: "Runs a job in steps and reports each step.",
      schema: z.object({
        steps: z.number().int().min(1).max(50).optional(),
        delay_ms: z.number().int().min(0).max(60_000).optional(),
      }),
    },
  );
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", abort);
      resolve();
    };
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", abort, { once: true });
  });
}

/**
 * `wait` (`ms`: a number): waits that long, then answers `waited <ms> ms`. A cancelled run stops
 * it early (it throws the abort's reason), as a well-behaved slow tool does.
 */
export function waitTool(): StructuredToolInterface {
  return tool(
    async ({ ms }, config?: RunnableConfig) => {
      await pause(ms, config?.signal);
      return `waited ${ms} ms`;
    },
    { name: "wait", description: "Waits a while.", schema: z.object({ ms: z.number().int().min(0) }) },
  );
}
