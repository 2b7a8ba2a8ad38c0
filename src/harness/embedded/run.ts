/**
 * One run on a local graph (the embedded agent or a user's graph), as the in-process harness
 * drives it: reads the thread first (its pending question, open tool calls a dead process left),
 * streams the graph's events as RunEvents, and repairs the thread when the run fails, is
 * cancelled or loses its reader, so the next run on it works.
 */
import { randomUUID } from "node:crypto";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { AntlerError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { userContent } from "../content.js";
import { cutOffMessages } from "../cut-off.js";
import type { AgentHealth } from "../health.js";
import { pendingInterrupts, resumeValue } from "../interrupts.js";
import type { LocalGraph } from "../local-graph.js";
import { type AntlerRunContext, identityOf } from "../middleware/dynamic-context.js";
import { closeOpenCalls, repairThread } from "../repair.js";
import { failureCause, MESSAGES, type RunErrorCode, toRunError } from "../run-errors.js";
import { anyReplyNode, modelNodeOnly, RunTranslator, replyFromState } from "../run-events.js";
import { steerable } from "../steer/local.js";
import type { SteerRun } from "../steer/mailbox.js";
import { type ApprovalAnswer, CONVERSATION_CONFIG_KEY, type RunEvent, type RunImage, type RunOptions } from "../types.js";
import type { UsageTarget } from "../usage.js";

export interface LocalRunnerOptions {
  graph: LocalGraph;
  /** `embedded`: the model node's text is the reply; `graph`: every top-graph node's, read back from the state. */
  backend: "embedded" | "graph";
  logger: Logger;
  recursionLimit: number;
  chatUsage: UsageTarget | undefined;
  health: AgentHealth;
  /** How often the model client retries a failed request, for the failure's log line. */
  maxRetries?: number;
}

/** A run (a new message) or a resume (an answer to the pending question). */
export type RunKind = "run" | "resume";

/** One run's progress, shared by the driver and the stream so either can finish it off. */
interface StreamState {
  /** Ids of the thread's messages before the run, to tell its new replies apart. */
  before: Set<string>;
  translator: RunTranslator;
  /** The graph was asked to run: from here on, stopping needs a repair. */
  started: boolean;
  /** The closing event was handed out (or a repair already ran). */
  ended: boolean;
  /** Messages steered into the run; they join it at a step boundary (steer/local.ts). */
  steer?: SteerRun;
}

/** How many settled threads are remembered. */
const SETTLED_MAX = 10_000;

/** Run errors that say nothing about the agent's health. */
const ROUTINE: ReadonlySet<string> = new Set([
  "cancelled",
  "interrupted",
  "timeout",
  "busy",
  "no_pending",
  "detached",
  "shutdown",
]);

function errorEvent(code: RunErrorCode, message: string): RunEvent {
  return { type: "error", code, message };
}

export class LocalRunner {
  readonly #o: LocalRunnerOptions;
  /**
   * Threads whose last run this process ended cleanly (a reply, no question, no repair): nothing
   * is pending and no tool call is open, so their next run needs no read of the thread first.
   * Embedded backend only; oldest dropped past SETTLED_MAX.
   */
  readonly #settled = new Set<string>();

  constructor(options: LocalRunnerOptions) {
    this.#o = options;
  }

  /**
   * One warning line per failed run: the cause in one sentence and, for a model failure, how
   * often the model client retried at most before giving up (its retries are not logged one by
   * one). The whole error, every wrapper's stack in it, is logged only at debug level.
   */
  #logFailure(log: Logger, err: unknown, code: RunErrorCode): void {
    const retries = code === "model_error" || code === "rate_limited" ? this.#o.maxRetries : undefined;
    log.warn({ code, cause: failureCause(err), ...(retries !== undefined ? { max_retries: retries } : {}) }, "run failed");
    log.debug({ err }, "run failed: the whole error");
  }

  /** Streams one run of the thread under `controller` (the thread's run guard holds it), open to `steer`. */
  async *run(
    threadId: string,
    kind: RunKind,
    text: string | ApprovalAnswer,
    options: RunOptions,
    controller: AbortController,
    steer?: SteerRun,
  ): AsyncGenerator<RunEvent> {
    const settled = this.#settled.delete(threadId);
    const replyNodes = this.#o.backend === "graph" ? anyReplyNode : modelNodeOnly;
    const run: StreamState = {
      before: new Set(),
      translator: new RunTranslator(replyNodes, this.#o.chatUsage),
      started: false,
      ended: false,
      // Watching each step for a tools step's end costs on every step: only where steering may come.
      ...(options.steerable && steer ? { steer } : {}),
    };
    try {
      let input: unknown;
      try {
        input =
          settled && kind === "run" && typeof text === "string" && !options.interrupted
            ? newMessage(text, options.images)
            : await this.#input(threadId, kind, text, run.before, options);
      } catch (err) {
        run.ended = true;
        if (err instanceof AntlerError && err.code === "approval_invalid") {
          yield errorEvent("approval_invalid", err.message);
          return;
        }
        this.#o.logger.error({ err, threadId }, "could not read the thread before the run");
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
    }
  }

  /**
   * The graph input of a run or a resume; undefined for a resume with nothing pending. Notes the
   * ids of the messages already in the thread in `before`.
   */
  async #input(
    threadId: string,
    kind: RunKind,
    text: string | ApprovalAnswer,
    before: Set<string>,
    { interruptId, images, interrupted }: RunOptions,
  ): Promise<unknown> {
    const { graph } = this.#o;
    const state = await graph.getState({ configurable: { thread_id: threadId } });
    for (const m of messagesOf(state.values)) if (m.id) before.add(m.id);
    const pending = pendingInterrupts(state.tasks);
    if (kind === "resume")
      return pending.length > 0 ? new Command({ resume: resumeValue(pending, text, interruptId) }) : undefined;
    if (typeof text !== "string") return undefined; // a run always has a text
    if (pending.length > 0) {
      // A new message instead of an answer drops the question; its tool call gets a result.
      await repairThread(graph, threadId, { reason: "abandoned" });
    } else if (closeOpenCalls(messagesOf(state.values), "").length > 0) {
      // No run of ours is active, yet tool calls are open: the process running it died.
      await repairThread(graph, threadId, { reason: "failed" });
    }
    const cutOff = interrupted ? cutOffMessages(interrupted, messagesOf(state.values)) : [];
    for (const m of cutOff) if (m.id) before.add(m.id);
    return newMessage(text, images, cutOff);
  }

  async *#stream(
    threadId: string,
    input: unknown,
    options: RunOptions,
    signal: AbortSignal,
    run: StreamState,
  ): AsyncGenerator<RunEvent> {
    const { translator } = run;
    const { backend, health } = this.#o;
    const identity = identityOf(options.user);
    const context: AntlerRunContext = { ...identity };
    if (options.user) context.user = options.user;
    if (options.context) context.labels = options.context;
    const log = this.#o.logger.child({ threadId });
    try {
      signal.throwIfAborted();
      run.started = true;
      const stream = await steerable(this.#o.graph, run.steer).stream(
        input as never,
        {
          configurable: {
            thread_id: threadId,
            ...identity,
            ...(options.conversation ? { [CONVERSATION_CONFIG_KEY]: options.conversation } : {}),
          },
          streamMode: ["messages", "updates", "custom"],
          signal,
          recursionLimit: this.#o.recursionLimit,
          context,
        } as never,
      );
      for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
        for (const event of translator.handle(mode, chunk)) yield event;
      }
    } catch (err) {
      const failure = toRunError(err, signal.aborted, signal.reason);
      const stopped = failure.code === "cancelled" || failure.code === "interrupted" || failure.code === "timeout";
      if (stopped) log.info({ code: failure.code }, "run stopped");
      else this.#logFailure(log, err, failure.code);
      const unreachable = failure.message === MESSAGES.unreachable || failure.message === MESSAGES.auth;
      if (!ROUTINE.has(failure.code)) health.fail(failure.message, unreachable);
      if (run.started) await this.#repair(threadId, translator);
      run.ended = true;
      yield errorEvent(failure.code, failure.message);
      return;
    }
    const reply = backend === "graph" ? await this.#storedReply(threadId, run.before) : undefined;
    health.reachable = true;
    run.ended = true;
    if (backend === "embedded" && !translator.clarification) this.#settle(threadId);
    yield translator.finish(reply);
  }

  #settle(threadId: string): void {
    this.#settled.add(threadId);
    if (this.#settled.size > SETTLED_MAX) this.#settled.delete(this.#settled.values().next().value as string);
  }

  /** A user's graph: the reply as the state holds it (nodes may write text no model streamed). */
  async #storedReply(threadId: string, before: Set<string>): Promise<string | undefined> {
    try {
      const state = await this.#o.graph.getState({ configurable: { thread_id: threadId } });
      return replyFromState(before, messagesOf(state.values));
    } catch (err) {
      this.#o.logger.warn({ err, threadId }, "could not read the reply back from the thread; using the streamed text");
      return undefined;
    }
  }

  async #repair(threadId: string, translator: RunTranslator): Promise<void> {
    try {
      const partial = { partialText: translator.turnText, partialId: translator.turnId };
      await repairThread(this.#o.graph, threadId, { ...partial, reason: "failed" });
    } catch (err) {
      this.#o.logger.error({ err, threadId }, "could not repair the thread after a failed run");
    }
  }
}

/**
 * The graph input of a run: the user's message, with its images as blocks after the text, after
 * `lead` (the cut-off reply it interrupted, see cut-off.ts).
 */
function newMessage(text: string, images?: RunImage[], lead: BaseMessage[] = []): { messages: BaseMessage[] } {
  const user = new HumanMessage({ content: userContent(text, images) as HumanMessage["content"], id: randomUUID() });
  return { messages: [...lead, user] };
}

/** The messages of a thread's state values. */
export function messagesOf(values: unknown): BaseMessage[] {
  return ((values as { messages?: BaseMessage[] } | undefined)?.messages ?? []) as BaseMessage[];
}
