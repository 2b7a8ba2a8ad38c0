/**
 * The `task` tool: runs a named subagent on a prompt and answers with its result. The progress
 * view shows each call as a subagent row titled by `description` (src/core/progress), and the
 * subagent's own steps as that row's progress.
 *
 * Per parent run (its `context` object, which the local runner makes fresh for every run; else its
 * thread id) at most `maxConcurrent` subagents work at once: parallel calls beyond that wait for a
 * slot, and say so in their progress. A subagent's time starts when it gets its slot; when it runs
 * out, the subagent is stopped and the model reads an error result. Any other failure of the
 * subagent is an error result too. Only the parent's abort (`/stop`, the run's timeout, a new
 * message that interrupts) ends the call with an error of its own: the parent run is over then.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ToolMessage } from "@langchain/core/messages";
import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { z } from "zod";
import { errorMessage } from "../../errors.js";
import { loopDetectionMiddleware } from "../middleware/loop-detection.js";
import { toolErrorsMiddleware } from "../middleware/tool-errors.js";
import type { UsageTarget } from "../usage.js";
import { runSubagent, type SubagentGraph } from "./run.js";
import { RunSlots } from "./slots.js";
import type { SubagentSpec, SubagentsSetup } from "./types.js";

export const TASK = "task";

const DEFAULTS = { maxConcurrent: 3, timeoutMs: 900_000, recursionLimit: 50 };

export interface TaskToolOptions {
  setup: SubagentsSetup;
  /** The lead agent's model: a subagent without one of its own uses it. */
  model: BaseChatModel;
  /** Where subagent turns report usage; `model` is replaced by each subagent's `modelName`. */
  usage?: UsageTarget;
}

interface Ready {
  spec: SubagentSpec;
  graph: SubagentGraph;
  timeoutMs: number;
  usage?: UsageTarget;
}

/** The parts of a tool's runnable config the task tool reads. */
interface TaskConfig {
  signal?: AbortSignal;
  writer?: (chunk: unknown) => void;
  toolCall?: { id?: string };
  context?: unknown;
  configurable?: Record<string, unknown>;
}

export function taskTool(options: TaskToolOptions): StructuredToolInterface {
  const { setup } = options;
  const slots = new RunSlots(setup.maxConcurrent ?? DEFAULTS.maxConcurrent);
  const recursionLimit = setup.recursionLimit ?? DEFAULTS.recursionLimit;
  const agents = new Map(setup.agents.map((spec) => [spec.name, prepare(spec, options)]));
  return tool(
    async ({ prompt, subagent_type }, raw) => {
      const config = (raw ?? {}) as TaskConfig;
      const ready = agents.get(subagent_type);
      const callId = config.toolCall?.id ?? "";
      if (!ready) {
        return failed(callId, `Error: no subagent named "${subagent_type}"; available: ${[...agents.keys()].join(", ")}`);
      }
      const parent = config.signal ?? new AbortController().signal;
      const progress = (text: string) => config.writer?.({ progress: text, id: callId });
      const run = config.context ?? config.configurable?.thread_id ?? slots;
      const release = await slots.acquire(run, parent, () =>
        progress(`waiting for a free slot (${slots.running(run)} subagents at work)`),
      );
      const timeout = AbortSignal.timeout(ready.timeoutMs);
      try {
        progress(`${subagent_type} at work`);
        const answer = await runSubagent(ready.graph, prompt, {
          signal: AbortSignal.any([parent, timeout]),
          recursionLimit,
          parentConfigurable: config.configurable,
          context: config.context,
          progress,
          usage: ready.usage,
        });
        return answer || `Subagent ${subagent_type} finished without an answer.`;
      } catch (err) {
        if (parent.aborted) throw err;
        if (timeout.aborted) {
          return failed(callId, `Error: subagent ${subagent_type} timed out after ${seconds(ready.timeoutMs)} and was stopped.`);
        }
        return failed(callId, `Error: subagent ${subagent_type} failed: ${errorMessage(err).slice(0, 2000)}`);
      } finally {
        release();
      }
    },
    {
      name: TASK,
      description: describe(setup, slots.limit),
      schema: z.object({
        description: z.string().describe("3 to 5 words on what the subagent does; the user sees them while it works."),
        prompt: z.string().describe("The whole task: the subagent sees nothing else of this conversation."),
        subagent_type: z.string().describe(`Which subagent: ${setup.agents.map((a) => a.name).join(", ")}.`),
      }),
    },
  );
}

/** A subagent's own agent, built once and run fresh (no checkpointer) for every task. */
function prepare(spec: SubagentSpec, options: TaskToolOptions): Ready {
  const graph = createAgent({
    model: spec.model ?? options.model,
    tools: spec.tools ?? [],
    systemPrompt: spec.systemPrompt,
    middleware: [toolErrorsMiddleware(), loopDetectionMiddleware()],
    name: `subagent:${spec.name}`,
  }) as unknown as SubagentGraph;
  const usage = options.usage && { sink: options.usage.sink, model: spec.modelName ?? options.usage.model };
  return { spec, graph, timeoutMs: spec.timeoutMs ?? options.setup.timeoutMs ?? DEFAULTS.timeoutMs, usage };
}

function describe(setup: SubagentsSetup, limit: number): string {
  const list = setup.agents.map((a) => `- ${a.name}: ${a.description.replace(/\s+/g, " ").trim()}`).join("\n");
  return [
    "Hand a bounded piece of work to a subagent. It works in a context of its own, with its own tools,",
    "and answers with its result, which you then use. Good for independent parts of a job that can run",
    `side by side (several task calls in one turn run in parallel, at most ${limit} at a time) and for`,
    "work one of the subagents below is made for. The subagent sees only `prompt`: put everything it",
    "needs there. It cannot ask the user anything. Do not use it for a quick step you can do yourself.",
    "",
    "Subagents:",
    list,
  ].join("\n");
}

function failed(callId: string, content: string): ToolMessage {
  return new ToolMessage({ content, tool_call_id: callId, name: TASK, status: "error" });
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
