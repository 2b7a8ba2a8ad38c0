/**
 * The in-process harness: runs a local graph per thread — the lead agent built from config
 * (`embedded`) or the user's own graph (`graph`) — streams RunEvents, pauses on interrupts and
 * resumes them, and keeps checkpoints in SQLite.
 *
 * One run per thread at a time (thread-runs.ts); a second gets a `busy` error. After an error, a
 * cancel or a caller that stops reading, the thread is repaired (run.ts, repair.ts) so the next
 * run on it works; a thread a dead process left with open tool calls is repaired when its next
 * run starts.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { ModelConfig } from "../../config/schema.js";
import type { Logger } from "../../log/logger.js";
import { silentLogger } from "../../log/logger.js";
import { AgentHealth } from "../health.js";
import { historyOf } from "../history.js";
import { pendingInterrupts, toClarification } from "../interrupts.js";
import { type LocalGraph, toLocalGraph } from "../local-graph.js";
import type { McpServers } from "../mcp/index.js";
import type { MemoryBook } from "../memory/book.js";
import type { PersonMemory } from "../memory/types.js";
import { DEFAULT_MAX_RETRIES } from "../models/index.js";
import { blocksAgent, type ModelProbeResult, ModelProber } from "../models/probe.js";
import { CLOSED_CALL_TEXT, repairThread } from "../repair.js";
import { SteerMailbox, type SteerOutcome } from "../steer/mailbox.js";
import { ThreadRuns } from "../thread-runs.js";
import { checkToolArgs } from "../tool-args.js";
import type {
  AgentStatus,
  ApprovalAnswer,
  ApprovalRequest,
  Clarification,
  Harness,
  HistoryEntry,
  RunEvent,
  RunOptions,
  ThreadInfo,
} from "../types.js";
import type { UsageSink } from "../usage.js";
import { LocalRunner, messagesOf } from "./run.js";

export interface AgentHarnessOptions {
  /** A `createAgent` result (such as `createAntlerAgent`'s) or any compiled LangGraph graph. */
  agent: unknown;
  /** Name of the model serving the threads, for `getThread` (the graph's path for a user's graph). */
  modelName: string;
  /**
   * `embedded` (default): the agent built by Antler; its model node's text is the reply.
   * `graph`: a user's graph; every top-graph node's text counts, and the final reply is read
   * back from the thread's state.
   */
  backend?: "embedded" | "graph";
  logger?: Logger;
  /** Max graph steps per run. */
  recursionLimit?: number;
  /** Called by `close()` after runs stopped: release the checkpointer's resources. */
  onClose?: () => void | Promise<void>;
  /** MCP servers whose tools the agent holds; closed (processes stopped) by `close()`. */
  mcp?: McpServers;
  /**
   * Receives the usage of every model turn of a run, as `chat` under `modelName`. Title and summary
   * calls happen inside the agent: `createAntlerAgent({ usage })` reports those.
   */
  onUsage?: UsageSink;
  /** The agent's tools, so `checkToolArgs` checks edited arguments against their own schemas. */
  tools?: readonly StructuredToolInterface[];
  /** The model entry of an embedded agent: `status(true)` asks its endpoint whether it answers. */
  model?: ModelConfig;
  /** The agent's memory book, when it has memory on: offered as `memory`, and closed (its work let finish) by `close()`. */
  memory?: MemoryBook;
}

export class AgentHarness implements Harness {
  readonly modelName: string;
  /** The MCP servers behind the agent's MCP tools, with their state (for status and doctor). */
  readonly mcp: McpServers | undefined;
  /** The people's remembered facts, when the agent has memory on (`/memory`). */
  readonly memory: PersonMemory | undefined;
  readonly #memory: MemoryBook | undefined;
  readonly #graph: LocalGraph;
  readonly #backend: "embedded" | "graph";
  readonly #onClose: (() => void | Promise<void>) | undefined;
  readonly #tools: readonly StructuredToolInterface[];
  readonly #runs = new ThreadRuns();
  readonly #steers = new SteerMailbox();
  readonly #runner: LocalRunner;
  readonly #health = new AgentHealth();
  /** Probes the model's endpoint for `status(true)`, cached; absent for a user's graph. */
  readonly #prober: ModelProber | undefined;
  /** The probe answer `status` last took in: a cached answer is taken once, so a later run's finding stands. */
  #probed: ModelProbeResult | undefined;

  constructor(options: AgentHarnessOptions) {
    const graph = toLocalGraph(options.agent);
    if (!graph) throw new TypeError("AgentHarness: `agent` must be a createAgent result or a compiled LangGraph graph");
    this.#graph = graph;
    this.#backend = options.backend ?? "embedded";
    this.modelName = options.modelName;
    this.#onClose = options.onClose;
    this.mcp = options.mcp;
    this.#memory = options.memory;
    this.memory = options.memory;
    this.#tools = options.tools ?? [];
    this.#prober = options.model && this.#backend === "embedded" ? new ModelProber(options.model) : undefined;
    this.#runner = new LocalRunner({
      graph,
      backend: this.#backend,
      logger: options.logger ?? silentLogger(),
      recursionLimit: options.recursionLimit ?? 50,
      chatUsage: options.onUsage && { sink: options.onUsage, model: this.modelName },
      health: this.#health,
      maxRetries: options.model ? (options.model.max_retries ?? DEFAULT_MAX_RETRIES) : undefined,
    });
  }

  run(threadId: string, text: string, options: RunOptions = {}): AsyncIterable<RunEvent> {
    return this.#runs.drive(threadId, options.signal, (c) =>
      this.#steers.during(threadId, (steer) => this.#runner.run(threadId, "run", text, options, c, steer)),
    );
  }

  resume(threadId: string, answer: string | ApprovalAnswer, options: RunOptions = {}): AsyncIterable<RunEvent> {
    return this.#runs.drive(threadId, options.signal, (c) =>
      this.#steers.during(threadId, (steer) => this.#runner.run(threadId, "resume", answer, options, c, steer)),
    );
  }

  /** Joins the thread's running turn at its next step boundary after a tools step (steer/local.ts). */
  steer(threadId: string, text: string, options: { id?: string } = {}): Promise<SteerOutcome> {
    return this.#steers.steer(threadId, text, options.id);
  }

  async checkToolArgs(request: ApprovalRequest, args: unknown): Promise<string | undefined> {
    const tool = this.#tools.find((t) => t.name === request.name);
    return checkToolArgs(request.name, tool?.schema ?? request.argsSchema, args);
  }

  async closePending(threadId: string, reason: string = CLOSED_CALL_TEXT.stopped): Promise<boolean> {
    if (this.#runs.has(threadId)) return false;
    const state = await this.#graph.getState({ configurable: { thread_id: threadId } });
    if (pendingInterrupts(state.tasks).length === 0) return false;
    await repairThread(this.#graph, threadId, { reason: "stopped", text: reason });
    return true;
  }

  cancel(threadId: string): boolean {
    return this.#runs.cancel(threadId);
  }

  /** `probe` asks the model's endpoint (answer cached for a few seconds); a user's graph has none to ask. */
  async status(probe = false): Promise<AgentStatus> {
    const target = this.#backend === "graph" ? this.modelName : `model ${this.modelName}`;
    if (probe && this.#prober) this.#takeProbe(await this.#prober.check());
    const { reachable, lastError } = this.#health;
    return { backend: this.#backend, target, reachable, last_error: lastError };
  }

  /** A blocked model names its problem (with the URL) in last_error; a good answer only restores `reachable`. */
  #takeProbe(result: ModelProbeResult): void {
    if (result === this.#probed || result.outcome === "unprobed") return;
    this.#probed = result;
    const health = this.#health;
    if (!blocksAgent(result.outcome)) {
      if (result.outcome === "ok") health.reachable = true;
      return;
    }
    health.reachable = false;
    const message = `model ${this.modelName}: ${result.detail}`;
    if (health.lastError?.message !== message) health.lastError = { message, at: result.at };
  }

  async getThread(threadId: string): Promise<ThreadInfo | undefined> {
    const running = this.#runs.has(threadId);
    const state = await this.#graph.getState({ configurable: { thread_id: threadId } });
    const values = (state.values ?? {}) as { title?: string };
    if (!state.createdAt && !running) return undefined;
    const info: ThreadInfo = {
      threadId,
      messageCount: messagesOf(state.values).length,
      model: this.modelName,
      running,
    };
    if (values.title) info.title = values.title;
    const pending = pendingInterrupts(state.tasks)[0];
    if (pending) info.pending = toClarification(pending.id ?? "", pending.value) satisfies Clarification;
    return info;
  }

  async history(threadId: string): Promise<HistoryEntry[]> {
    const state = await this.#graph.getState({ configurable: { thread_id: threadId } });
    return historyOf(messagesOf(state.values));
  }

  async close(): Promise<void> {
    if (this.#runs.closed) return;
    this.#runs.close();
    // Give aborted runs a moment to write their repairs before the database goes away.
    await this.#runs.settle(2000);
    // A turn's extraction may still be writing: it gets a moment, then it is aborted.
    await this.#memory?.close();
    await this.mcp?.close();
    await this.#onClose?.();
  }
}
