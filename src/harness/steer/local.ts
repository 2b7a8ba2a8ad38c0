import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { Command, isGraphDrained, RunControl } from "@langchain/langgraph";
import { pendingInterrupts } from "../interrupts.js";
import type { LocalGraph } from "../local-graph.js";
import { STEERED_KEY, takesSteer } from "./boundary.js";
import type { SteeredText, SteerRun } from "./mailbox.js";

/** The node whose steps run tool calls (createAgent's, ToolNode's by convention). */
const TOOLS_NODE = "tools";
/** LangGraph tags each node run of a step with this prefix. */
const STEP_TAG = "graph:step:";
/** More continuations than this in one run means something loops. */
const MAX_SEGMENTS = 100;

/**
 * Watches the top graph's node runs as they start and end, inside the steps: `afterTools` is true
 * from the end of a tools step (its last tool task) until another node starts.
 */
class ToolsStepWatch extends BaseCallbackHandler {
  name = "antler_steer_watch";
  afterTools = false;
  readonly #tools = new Set<string>();

  constructor() {
    // Awaited, not queued: the drain question is asked right after the step, not some time later.
    super({ _awaitHandler: true, ignoreLLM: true, ignoreRetriever: true, ignoreAgent: true, ignoreCustomEvent: true });
  }

  override handleChainStart(
    _chain: unknown,
    _inputs: unknown,
    runId: string,
    _parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    if (!tags?.some((t) => t.startsWith(STEP_TAG))) return;
    // Nodes of a subgraph have `parent|child` namespaces; only the top graph's steps count.
    if (String(metadata?.langgraph_checkpoint_ns ?? "").includes("|")) return;
    if (metadata?.langgraph_node === TOOLS_NODE) this.#tools.add(runId);
    this.afterTools = false;
  }

  override handleChainEnd(_outputs: unknown, runId: string): void {
    if (this.#tools.delete(runId) && this.#tools.size === 0) this.afterTools = true;
  }

  override handleChainError(_err: unknown, runId: string): void {
    this.#tools.delete(runId);
  }
}

/** Drains the run at the boundary after a tools step while a steered message waits. */
class SteerControl extends RunControl {
  constructor(
    private readonly steer: SteerRun,
    private readonly watch: ToolsStepWatch,
  ) {
    super();
  }

  override get drainRequested(): boolean {
    return super.drainRequested || (this.steer.waiting > 0 && this.watch.afterTools);
  }

  override get drainReason(): string | undefined {
    return super.drainReason ?? "steer";
  }
}

/** A steered message as the thread keeps it: a user message, marked as steered. */
export function steeredMessage({ text, id }: SteeredText): HumanMessage {
  return new HumanMessage({ content: text, id, additional_kwargs: { [STEERED_KEY]: true } });
}

/** `graph` as a run streams it: with `steer`, its stream goes on across the drains steering asks for. */
export function steerable(graph: LocalGraph, steer: SteerRun | undefined): Pick<LocalGraph, "stream"> {
  if (!steer) return graph;
  return { stream: async (input, config) => steeredStream(graph, input, config as Record<string, unknown>, steer) };
}

/**
 * The graph's stream for `input`, continued across every drain a steered message asks for, as
 * one stream of `[mode, chunk]` items. `config` is the run's stream config (thread id, modes,
 * signal); a failure of the graph is thrown as it is.
 */
export async function* steeredStream(
  graph: LocalGraph,
  input: unknown,
  config: Record<string, unknown>,
  steer: SteerRun,
): AsyncGenerator<unknown> {
  let next = input;
  /** Ids of the steered messages the current stream was started with, until it shows it runs. */
  let handed: string[] = [];
  for (let segment = 0; ; segment++) {
    const watch = new ToolsStepWatch();
    const callbacks = [...((config.callbacks as unknown[] | undefined) ?? []), watch];
    try {
      const stream = await graph.stream(next, { ...config, callbacks, control: new SteerControl(steer, watch) });
      for await (const item of stream) {
        steer.confirm();
        yield item;
      }
      steer.confirm();
      return;
    } catch (err) {
      if (!isGraphDrained(err) || segment >= MAX_SEGMENTS) {
        // Failed before it streamed anything: the messages count as taken only if they went in.
        if (handed.length > 0 && (await inThread(graph, config, handed))) steer.confirm();
        throw err;
      }
      const state = await readThread(graph, config);
      if (steer.waiting > 0 && takesSteer(state.messages, state.questions)) {
        const messages = steer.take().map(steeredMessage);
        handed = messages.map((m) => m.id as string);
        next = new Command({ update: { messages } });
      } else {
        handed = [];
        next = null; // not a place for them: go on, they wait for the next one
      }
    }
  }
}

async function readThread(graph: LocalGraph, config: Record<string, unknown>) {
  const threadId = (config.configurable as { thread_id?: string }).thread_id;
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  const messages = ((state.values as { messages?: BaseMessage[] } | undefined)?.messages ?? []) as BaseMessage[];
  return { messages, questions: pendingInterrupts(state.tasks).length };
}

async function inThread(graph: LocalGraph, config: Record<string, unknown>, ids: string[]): Promise<boolean> {
  try {
    const { messages } = await readThread(graph, config);
    return ids.every((id) => messages.some((m) => m.id === id));
  } catch {
    return false;
  }
}
