/**
 * The in-process harness: runs a local graph per thread — the lead agent built from config
 * (`embedded`) or the user's own graph (`graph`) — streams RunEvents, pauses on interrupts and
 * resumes them, and keeps checkpoints in SQLite.
 *
 * One run per thread at a time; a second gets a `busy` error. After an error, a cancel or a
 * caller that stops reading, the thread is repaired (see repair.ts) so the next run on it works;
 * a thread a dead process left with open tool calls is repaired when its next run starts.
 */
import { randomUUID } from "node:crypto";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import type { ModelConfig } from "../config/schema.js";
import { AntlerError } from "../errors.js";
import type { Logger } from "../log/logger.js";
import { silentLogger } from "../log/logger.js";
import { userContent } from "./content.js";
import { type LocalGraph, toLocalGraph } from "./graph.js";
import { historyOf } from "./history.js";
import { pendingInterrupts, resumeValue, toClarification } from "./interrupts.js";
import type { McpServers } from "./mcp/index.js";
import type { AntlerRunContext } from "./middleware/dynamic-context.js";
import { blocksAgent, type ModelProbeResult, ModelProber } from "./models/probe.js";
import { CLOSED_CALL_TEXT, closeOpenCalls, repairThread } from "./repair.js";
import { MESSAGES, type RunErrorCode, toRunError } from "./run-errors.js";
import { anyReplyNode, modelNodeOnly, RunTranslator, replyFromState } from "./run-events.js";
import { checkToolArgs } from "./tool-args.js";
import type {
  AgentStatus,
  ApprovalAnswer,
  ApprovalRequest,
  Clarification,
  Harness,
  HistoryEntry,
  RunEvent,
  RunImage,
  RunOptions,
  ThreadInfo,
} from "./types.js";
import type { UsageSink, UsageTarget } from "./usage.js";

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
}

interface ActiveRun {
  controller: AbortController;
}

/** One run's progress, shared by the driver and the stream so either can finish it off. */
interface StreamState {
  /** Ids of the thread's messages before the run, to tell its new replies apart. */
  before: Set<string>;
  translator: RunTranslator;
  /** The graph was asked to run: from here on, stopping needs a repair. */
  started: boolean;
  /** The closing event was handed out (or a repair already ran). */
  ended: boolean;
}

function errorEvent(code: RunErrorCode, message: string): RunEvent {
  return { type: "error", code, message };
}

/** How many settled threads are remembered. */
const SETTLED_MAX = 10_000;

/** Run errors that say nothing about the agent's health. */
const ROUTINE: ReadonlySet<string> = new Set(["cancelled", "timeout", "busy", "no_pending", "detached", "shutdown"]);

export class AgentHarness implements Harness {
  readonly modelName: string;
  /** The MCP servers behind the agent's MCP tools, with their state (for status and doctor). */
  readonly mcp: McpServers | undefined;
  readonly #graph: LocalGraph;
  readonly #backend: "embedded" | "graph";
  readonly #logger: Logger;
  readonly #recursionLimit: number;
  readonly #onClose: (() => void | Promise<void>) | undefined;
  readonly #chatUsage: UsageTarget | undefined;
  readonly #active = new Map<string, ActiveRun>();
  readonly #tools: readonly StructuredToolInterface[];
  #closed = false;
  #lastError: AgentStatus["last_error"] = null;
  /** False after a run or a probe could not connect to the model or had its key refused, until one succeeds. */
  #reachable = true;
  /** Probes the model's endpoint for `status(true)`, cached; absent for a user's graph. */
  readonly #prober: ModelProber | undefined;
  /** The probe answer `status` last took in: a cached answer is taken once, so a later run's finding stands. */
  #probed: ModelProbeResult | undefined;
  /**
   * Threads whose last run this process ended cleanly (a reply, no question, no repair): nothing
   * is pending and no tool call is open, so their next run needs no read of the thread first.
   * Embedded backend only; oldest dropped past SETTLED_MAX.
   */
  readonly #settled = new Set<string>();

  constructor(options: AgentHarnessOptions) {
    const graph = toLocalGraph(options.agent);
    if (!graph) throw new TypeError("AgentHarness: `agent` must be a createAgent result or a compiled LangGraph graph");
    this.#graph = graph;
    this.#backend = options.backend ?? "embedded";
    this.modelName = options.modelName;
    this.#logger = options.logger ?? silentLogger();
    this.#recursionLimit = options.recursionLimit ?? 50;
    this.#onClose = options.onClose;
    this.mcp = options.mcp;
    this.#chatUsage = options.onUsage && { sink: options.onUsage, model: this.modelName };
    this.#tools = options.tools ?? [];
    this.#prober = options.model && this.#backend === "embedded" ? new ModelProber(options.model) : undefined;
  }

  run(threadId: string, text: string, options: RunOptions = {}): AsyncIterable<RunEvent> {
    return this.#drive(threadId, "run", text, options);
  }

  resume(threadId: string, answer: string | ApprovalAnswer, options: RunOptions = {}): AsyncIterable<RunEvent> {
    return this.#drive(threadId, "resume", answer, options);
  }

  async checkToolArgs(request: ApprovalRequest, args: unknown): Promise<string | undefined> {
    const tool = this.#tools.find((t) => t.name === request.name);
    return checkToolArgs(request.name, tool?.schema ?? request.argsSchema, args);
  }

  async closePending(threadId: string, reason: string = CLOSED_CALL_TEXT.stopped): Promise<boolean> {
    if (this.#active.has(threadId)) return false;
    const state = await this.#graph.getState({ configurable: { thread_id: threadId } });
    if (pendingInterrupts(state.tasks).length === 0) return false;
    await repairThread(this.#graph, threadId, { reason: "stopped", text: reason });
    return true;
  }

  cancel(threadId: string): boolean {
    const active = this.#active.get(threadId);
    if (!active) return false;
    active.controller.abort();
    return true;
  }

  /** `probe` asks the model's endpoint (answer cached for a few seconds); a user's graph has none to ask. */
  async status(probe = false): Promise<AgentStatus> {
    const target = this.#backend === "graph" ? this.modelName : `model ${this.modelName}`;
    if (probe && this.#prober) this.#takeProbe(await this.#prober.check());
    return { backend: this.#backend, target, reachable: this.#reachable, last_error: this.#lastError };
  }

  /** A blocked model names its problem (with the URL) in last_error; a good answer only restores `reachable`. */
  #takeProbe(result: ModelProbeResult): void {
    if (result === this.#probed || result.outcome === "unprobed") return;
    this.#probed = result;
    if (!blocksAgent(result.outcome)) {
      if (result.outcome === "ok") this.#reachable = true;
      return;
    }
    this.#reachable = false;
    const message = `model ${this.modelName}: ${result.detail}`;
    if (this.#lastError?.message !== message) this.#lastError = { message, at: result.at };
  }

  async getThread(threadId: string): Promise<ThreadInfo | undefined> {
    const running = this.#active.has(threadId);
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
    if (this.#closed) return;
    this.#closed = true;
    for (const run of this.#active.values()) run.controller.abort();
    // Give aborted runs a moment to write their repairs before the database goes away.
    const deadline = Date.now() + 2000;
    while (this.#active.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await this.mcp?.close();
    await this.#onClose?.();
  }

  async *#drive(
    threadId: string,
    kind: "run" | "resume",
    text: string | ApprovalAnswer,
    options: RunOptions,
  ): AsyncGenerator<RunEvent> {
    if (this.#closed) {
      yield errorEvent("internal", MESSAGES.internal);
      return;
    }
    if (this.#active.has(threadId)) {
      yield errorEvent("busy", MESSAGES.busy);
      return;
    }
    const controller = new AbortController();
    this.#active.set(threadId, { controller });
    const settled = this.#settled.delete(threadId);
    const abort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", abort, { once: true });
    if (options.signal?.aborted) controller.abort(options.signal.reason);
    const replyNodes = this.#backend === "graph" ? anyReplyNode : modelNodeOnly;
    const run: StreamState = {
      before: new Set(),
      translator: new RunTranslator(replyNodes, this.#chatUsage),
      started: false,
      ended: false,
    };
    try {
      let input: unknown;
      try {
        input =
          settled && kind === "run" && typeof text === "string"
            ? newMessage(text, options.images)
            : await this.#input(threadId, kind, text, run.before, options.interruptId, options.images);
      } catch (err) {
        run.ended = true;
        if (err instanceof AntlerError && err.code === "approval_invalid") {
          yield errorEvent("approval_invalid", err.message);
          return;
        }
        this.#logger.error({ err, threadId }, "could not read the thread before the run");
        yield errorEvent("internal", MESSAGES.internal);
        return;
      }
      if (!input) {
        run.ended = true;
        yield errorEvent("no_pending", MESSAGES.no_pending);
        return;
      }
      yield* this.#stream(threadId, input, options, controller.signal, run);
    } finally {
      // A caller that stops iterating early must not leave the graph running in the background.
      controller.abort();
      // Nor a thread with open tool calls or without the text the caller already showed.
      if (run.started && !run.ended) await this.#repair(threadId, run.translator);
      options.signal?.removeEventListener("abort", abort);
      this.#active.delete(threadId);
    }
  }

  /**
   * The graph input of a run or a resume; undefined for a resume with nothing pending. Notes the
   * ids of the messages already in the thread in `before`.
   */
  async #input(
    threadId: string,
    kind: "run" | "resume",
    text: string | ApprovalAnswer,
    before: Set<string>,
    interruptId?: string,
    images?: RunImage[],
  ): Promise<unknown> {
    const state = await this.#graph.getState({ configurable: { thread_id: threadId } });
    for (const m of messagesOf(state.values)) if (m.id) before.add(m.id);
    const pending = pendingInterrupts(state.tasks);
    if (kind === "resume")
      return pending.length > 0 ? new Command({ resume: resumeValue(pending, text, interruptId) }) : undefined;
    if (typeof text !== "string") return undefined; // a run always has a text
    if (pending.length > 0) {
      // A new message instead of an answer drops the question; its tool call gets a result.
      await repairThread(this.#graph, threadId, { reason: "abandoned" });
    } else if (closeOpenCalls(messagesOf(state.values), "").length > 0) {
      // No run of ours is active, yet tool calls are open: the process running it died.
      await repairThread(this.#graph, threadId, { reason: "failed" });
    }
    return newMessage(text, images);
  }

  async *#stream(
    threadId: string,
    input: unknown,
    options: RunOptions,
    signal: AbortSignal,
    run: StreamState,
  ): AsyncGenerator<RunEvent> {
    const { translator } = run;
    const context: AntlerRunContext = {};
    if (options.user) context.user = options.user;
    if (options.context) context.labels = options.context;
    const log = this.#logger.child({ threadId });
    try {
      signal.throwIfAborted();
      run.started = true;
      const stream = await this.#graph.stream(
        input as never,
        {
          configurable: { thread_id: threadId },
          streamMode: ["messages", "updates"],
          signal,
          recursionLimit: this.#recursionLimit,
          context,
        } as never,
      );
      for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
        for (const event of translator.handle(mode, chunk)) yield event;
      }
    } catch (err) {
      const failure = toRunError(err, signal.aborted, signal.reason);
      if (failure.code === "cancelled" || failure.code === "timeout") log.info({ code: failure.code }, "run stopped");
      else log.warn({ err, code: failure.code }, "run failed");
      if (!ROUTINE.has(failure.code)) this.#lastError = { message: failure.message, at: new Date().toISOString() };
      if (failure.message === MESSAGES.unreachable || failure.message === MESSAGES.auth) this.#reachable = false;
      if (run.started) await this.#repair(threadId, translator);
      run.ended = true;
      yield errorEvent(failure.code, failure.message);
      return;
    }
    const reply = this.#backend === "graph" ? await this.#storedReply(threadId, run.before) : undefined;
    this.#reachable = true;
    run.ended = true;
    if (this.#backend === "embedded" && !translator.clarification) this.#settle(threadId);
    yield translator.finish(reply);
  }

  #settle(threadId: string): void {
    this.#settled.add(threadId);
    if (this.#settled.size > SETTLED_MAX) this.#settled.delete(this.#settled.values().next().value as string);
  }

  /** A user's graph: the reply as the state holds it (nodes may write text no model streamed). */
  async #storedReply(threadId: string, before: Set<string>): Promise<string | undefined> {
    try {
      const state = await this.#graph.getState({ configurable: { thread_id: threadId } });
      return replyFromState(before, messagesOf(state.values));
    } catch (err) {
      this.#logger.warn({ err, threadId }, "could not read the reply back from the thread; using the streamed text");
      return undefined;
    }
  }

  async #repair(threadId: string, translator: RunTranslator): Promise<void> {
    try {
      const partial = { partialText: translator.turnText, partialId: translator.turnId };
      await repairThread(this.#graph, threadId, { ...partial, reason: "failed" });
    } catch (err) {
      this.#logger.error({ err, threadId }, "could not repair the thread after a failed run");
    }
  }
}

/** The graph input of a run: the user's message, with its images as blocks after the text. */
function newMessage(text: string, images?: RunImage[]): { messages: BaseMessage[] } {
  return { messages: [new HumanMessage({ content: userContent(text, images) as HumanMessage["content"], id: randomUUID() })] };
}

function messagesOf(values: unknown): BaseMessage[] {
  return ((values as { messages?: BaseMessage[] } | undefined)?.messages ?? []) as BaseMessage[];
}
