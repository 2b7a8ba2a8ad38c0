/**
 * The remote harness: the agent runs on a LangGraph API server (LangGraph Platform, `langgraph
 * dev`, a DeerFlow gateway) and Antler drives it through `@langchain/langgraph-sdk`.
 *
 * - Antler's thread id is the server thread's id; the server thread is created on first use,
 *   with the conversation's labels as metadata, so operators can find it there.
 * - A run streams `messages-tuple` (reply text), `updates` (tools, interrupts) and `values` (the
 *   state, from which the final reply is read, so it is exactly what the server stored).
 * - Runs are started resumable and go on when Antler disconnects. Each carries its message's tag
 *   in its metadata, so a restarted gateway finds the run and `reattach`es to it instead of
 *   starting a second one.
 * - `/stop`, a timeout or a reader that stops early cancels the server run, and the thread is
 *   repaired (open tool calls closed, the text already shown kept) so the next run works.
 */
import { randomUUID } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import { isHumanMessage } from "@langchain/core/messages";
import { Client } from "@langchain/langgraph-sdk";
import type { RemoteAgentConfig } from "../../config/schema.js";
import { AntlerError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { silentLogger } from "../../log/logger.js";
import { userContent } from "../content.js";
import { historyOf } from "../history.js";
import { pendingInterrupts, resumeValue, toClarification } from "../interrupts.js";
import { CLOSED_CALL_TEXT, closeOpenCalls, turnStored } from "../repair.js";
import { MESSAGES } from "../run-errors.js";
import { anyReplyNode, RunTranslator, replyFromState } from "../run-events.js";
import { checkToolArgs } from "../tool-args.js";
import type {
  AgentStatus,
  ApprovalAnswer,
  ApprovalRequest,
  Harness,
  HistoryEntry,
  RunEvent,
  RunImage,
  RunOptions,
  ThreadInfo,
} from "../types.js";
import type { UsageSink, UsageTarget } from "../usage.js";
import { loggable, RemoteRunError, toRemoteFailure } from "./errors.js";
import { endedWithQuestion, messagesIn, toStreamedMessage, toUpdate } from "./messages.js";

export interface RemoteHarnessOptions {
  settings: RemoteAgentConfig;
  logger?: Logger;
  /**
   * Receives the usage the server's AI messages carry, as `chat` under the assistant id. Model
   * calls that write no message (a title, a summary) stay on the server and are not reported.
   */
  onUsage?: UsageSink;
}

const STREAM_MODES: Array<"messages-tuple" | "updates" | "values"> = ["messages-tuple", "updates", "values"];
/** Run metadata key that holds the tag of the message behind the run. */
export const TAG_KEY = "antler_tag";
/** How long a status probe waits for the server. */
const PROBE_TIMEOUT_MS = 5_000;
/** Runs of one thread searched for a tag after a restart. */
const REATTACH_SEARCH = 50;

type Start = { kind: "run"; text: string } | { kind: "resume"; text: string | ApprovalAnswer } | { kind: "join"; runId: string };

/** One run's progress. */
interface RemoteRun {
  translator: RunTranslator;
  runId?: string;
  /** Ids of the messages in the run's first state, to tell its new replies apart. */
  before?: Set<string>;
  /** The newest full state the run streamed. */
  last?: Record<string, unknown>;
  ended: boolean;
}

type Payload = { input: Record<string, unknown> } | { command: { resume: unknown } };

function userInput(text: string, images?: RunImage[]): Record<string, unknown> {
  return { messages: [{ type: "human", content: userContent(text, images), id: randomUUID() }] };
}

function ids(messages: readonly BaseMessage[]): Set<string> {
  return new Set(messages.flatMap((m) => (m.id ? [m.id] : [])));
}

/** The reply when the run's first state is unknown: the assistant text after the newest user message. */
function replyAfterLastHuman(messages: readonly BaseMessage[]): string | undefined {
  const since = messages.findLastIndex((m) => isHumanMessage(m));
  return replyFromState(ids(messages.slice(0, since + 1)), messages.slice(since + 1));
}

/** Plain wire form of a repair message. */
function wire(message: BaseMessage): Record<string, unknown> {
  const m = message as BaseMessage & { tool_call_id?: string; status?: string };
  return { type: m.type, content: m.content, id: m.id, name: m.name, tool_call_id: m.tool_call_id, status: m.status };
}

export class RemoteHarness implements Harness {
  readonly #client: Client;
  readonly #settings: RemoteAgentConfig;
  readonly #logger: Logger;
  readonly #chatUsage: UsageTarget | undefined;
  /** Server threads known to exist, so each is created once per process. */
  readonly #known = new Set<string>();
  readonly #active = new Map<string, AbortController>();
  #closed = false;
  #reachable = true;
  #lastError: AgentStatus["last_error"] = null;

  constructor(options: RemoteHarnessOptions) {
    this.#settings = options.settings;
    this.#logger = options.logger ?? silentLogger();
    this.#chatUsage = options.onUsage && { sink: options.onUsage, model: options.settings.assistant_id };
    this.#client = new Client({
      apiUrl: options.settings.url.replace(/\/+$/, ""),
      // null: never read a key from the environment; config is the only source.
      apiKey: options.settings.api_key || null,
      defaultHeaders: options.settings.headers,
      timeoutMs: options.settings.timeout_ms,
      // One retry: a server that is restarting gets a second chance; a user waits seconds, not minutes.
      callerOptions: { maxRetries: 1 },
    });
  }

  /** The SDK client, for checks and tests. */
  get client(): Client {
    return this.#client;
  }

  run(threadId: string, text: string, options: RunOptions = {}): AsyncIterable<RunEvent> {
    return this.#drive(threadId, { kind: "run", text }, options);
  }

  resume(threadId: string, answer: string | ApprovalAnswer, options: RunOptions = {}): AsyncIterable<RunEvent> {
    return this.#drive(threadId, { kind: "resume", text: answer }, options);
  }

  /** The server's tools are out of sight: edits are checked against the schema the approval sent, if any. */
  async checkToolArgs(request: ApprovalRequest, args: unknown): Promise<string | undefined> {
    return checkToolArgs(request.name, request.argsSchema, args);
  }

  cancel(threadId: string): boolean {
    const active = this.#active.get(threadId);
    if (!active) return false;
    active.abort();
    return true;
  }

  async reattach(threadId: string, tag: string, options: RunOptions = {}): Promise<AsyncIterable<RunEvent> | undefined> {
    const runs = await this.#client.runs.list(threadId, { limit: REATTACH_SEARCH });
    const found = runs.find((r) => (r.metadata as Record<string, unknown> | undefined)?.[TAG_KEY] === tag);
    if (!found) return undefined;
    this.#known.add(threadId);
    return this.#drive(threadId, { kind: "join", runId: found.run_id }, options);
  }

  async getThread(threadId: string): Promise<ThreadInfo | undefined> {
    let state: Awaited<ReturnType<Client["threads"]["getState"]>>;
    try {
      state = await this.#client.threads.getState(threadId);
    } catch (err) {
      if ((err as { status?: number }).status === 404) return undefined;
      throw err;
    }
    const messages = messagesIn(state.values);
    const info: ThreadInfo = {
      threadId,
      messageCount: messages.length,
      model: this.#settings.assistant_id,
      running: this.#active.has(threadId),
    };
    const title = (state.values as { title?: unknown } | null)?.title;
    if (typeof title === "string" && title) info.title = title;
    const interrupt = pendingInterrupts(state.tasks as never)[0];
    const pending = interrupt ? toClarification(interrupt.id ?? "", interrupt.value) : endedWithQuestion(messages);
    if (pending) info.pending = pending;
    return info;
  }

  async history(threadId: string): Promise<HistoryEntry[]> {
    try {
      return historyOf(messagesIn((await this.#client.threads.getState(threadId)).values));
    } catch (err) {
      if ((err as { status?: number }).status === 404) return [];
      throw err;
    }
  }

  async status(probe = false): Promise<AgentStatus> {
    if (probe) {
      try {
        await this.check();
      } catch {
        // check() noted the failure.
      }
    }
    return {
      backend: "remote",
      target: `${this.#settings.url} assistant ${this.#settings.assistant_id}`,
      reachable: this.#reachable,
      last_error: this.#lastError,
    };
  }

  /** Checks the server, the key and the assistant; returns a line for `antler doctor`. */
  async check(timeoutMs = PROBE_TIMEOUT_MS): Promise<string> {
    const { url, assistant_id: id } = this.#settings;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
      const graph = isUuid
        ? (await this.#client.assistants.get(id, { signal })).graph_id
        : (await this.#client.assistants.search({ graphId: id, limit: 1, signal }))[0]?.graph_id;
      if (!graph) {
        throw Object.assign(new Error(`assistant ${id} not found`), { status: 404 });
      }
      this.#reachable = true;
      return `${url} is reachable; assistant ${id} runs graph ${graph}`;
    } catch (err) {
      const failure = toRemoteFailure(err, { url, assistant: id, aborted: false });
      this.#noteFailure(failure.detail ?? failure.message, failure.message === MESSAGES.agentUnreachable);
      throw new Error(failure.detail ?? failure.message);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    // Runs go on on the server: a restarted gateway reattaches to them. Only our reading stops.
    for (const controller of this.#active.values()) controller.abort(new Error("the gateway is closing"));
  }

  async *#drive(threadId: string, start: Start, options: RunOptions): AsyncGenerator<RunEvent> {
    if (this.#closed) {
      yield { type: "error", code: "internal", message: MESSAGES.internal };
      return;
    }
    if (this.#active.has(threadId)) {
      yield { type: "error", code: "busy", message: MESSAGES.busy };
      return;
    }
    const controller = new AbortController();
    this.#active.set(threadId, controller);
    const abort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", abort, { once: true });
    if (options.signal?.aborted) controller.abort(options.signal.reason);
    const run: RemoteRun = { translator: new RunTranslator(anyReplyNode, this.#chatUsage), ended: false };
    try {
      yield* this.#stream(threadId, start, options, controller.signal, run);
    } finally {
      options.signal?.removeEventListener("abort", abort);
      // A reader that stopped early: stop the server run too, unless the gateway is closing
      // (then the run goes on and is reattached after the restart).
      if (!run.ended && !this.#closed) {
        controller.abort();
        await this.#cancelServerRun(threadId, run, options.tag);
        await this.#repair(threadId, run);
      }
      this.#active.delete(threadId);
    }
  }

  async *#stream(
    threadId: string,
    start: Start,
    options: RunOptions,
    signal: AbortSignal,
    run: RemoteRun,
  ): AsyncGenerator<RunEvent> {
    const { url, assistant_id: assistant } = this.#settings;
    try {
      signal.throwIfAborted();
      let events: AsyncIterable<{ event: string; data: unknown }>;
      if (start.kind === "join") {
        run.runId = start.runId;
        events = this.#client.runs.joinStream(threadId, start.runId, { lastEventId: "-1", streamMode: STREAM_MODES, signal });
      } else {
        await this.#ensureThread(threadId, options, signal);
        const payload =
          start.kind === "resume"
            ? await this.#resumePayload(threadId, start.text, options.interruptId)
            : { input: userInput(start.text, options.images) };
        if (!payload) {
          run.ended = true;
          yield { type: "error", code: "no_pending", message: MESSAGES.no_pending };
          return;
        }
        events = this.#client.runs.stream(threadId, assistant, {
          ...payload,
          streamMode: STREAM_MODES,
          streamSubgraphs: this.#settings.stream_subgraphs,
          config: this.#settings.config,
          multitaskStrategy: this.#settings.multitask_strategy,
          onDisconnect: "continue",
          streamResumable: true,
          ...(options.tag ? { metadata: { [TAG_KEY]: options.tag } } : {}),
          signal,
        }) as AsyncIterable<{ event: string; data: unknown }>;
      }
      for await (const part of events) {
        for (const event of this.#handle(part, run)) yield event;
      }
      signal.throwIfAborted();
      const closing = await this.#finish(threadId, run);
      this.#reachable = true;
      run.ended = true;
      yield closing;
    } catch (err) {
      if (err instanceof AntlerError && err.code === "approval_invalid") {
        run.ended = true; // nothing ran: the approval stays pending
        yield { type: "error", code: "approval_invalid", message: err.message };
        return;
      }
      if (signal.aborted && (signal.reason as { name?: string } | undefined)?.name === "DetachError") {
        // The gateway is going away: the server run goes on, and the next process reattaches.
        this.#logger.info({ threadId, runId: run.runId }, "left the remote run going");
        run.ended = true;
        yield { type: "error", code: "detached", message: MESSAGES.detached };
        return;
      }
      const aborted = signal.aborted && !this.#closed;
      const failure = toRemoteFailure(err, { url, assistant, aborted, reason: signal.reason });
      if (failure.detail) {
        this.#logger.warn({ err: loggable(err), threadId, code: failure.code }, "remote run failed");
        this.#noteFailure(failure.detail, failure.message === MESSAGES.agentUnreachable);
      } else {
        this.#logger.info({ threadId, code: failure.code }, "remote run stopped");
      }
      if (!this.#closed) {
        if (aborted) await this.#cancelServerRun(threadId, run, options.tag);
        await this.#repair(threadId, run);
      }
      run.ended = true;
      yield { type: "error", code: failure.code, message: failure.message };
    }
  }

  /** Events for one part of the server's stream. */
  #handle(part: { event: string; data: unknown }, run: RemoteRun): RunEvent[] {
    const [mode, namespace] = part.event.split("|");
    if (mode === "metadata") {
      run.runId ??= (part.data as { run_id?: string } | null)?.run_id;
      return [];
    }
    if (mode === "error") {
      const data = part.data as { message?: string; error?: string } | string | null;
      throw new RemoteRunError(typeof data === "string" ? data : (data?.message ?? data?.error ?? "unknown error"));
    }
    if (mode === "messages") {
      const [message, meta] = (part.data ?? []) as [unknown, Record<string, unknown>];
      const m = toStreamedMessage(message);
      return m ? run.translator.handle("messages", [m, meta]) : [];
    }
    // Tool events and state come from the top graph only; subgraph text streams above when asked for.
    if (namespace !== undefined) return [];
    if (mode === "updates") return run.translator.handle("updates", toUpdate(part.data));
    if (mode === "values" && Array.isArray((part.data as { messages?: unknown } | null)?.messages)) {
      const values = part.data as Record<string, unknown>;
      run.before ??= ids(messagesIn(values));
      run.last = values;
    }
    return [];
  }

  /** The closing event: the question the run ended on, or its reply as the server stored it. */
  async #finish(threadId: string, run: RemoteRun): Promise<RunEvent> {
    const { translator } = run;
    let values = run.last;
    let fromState = false;
    if (!values || (!run.before && !translator.clarification)) {
      // A joined run that had ended before we joined streams nothing: read what it left.
      const state = await this.#client.threads.getState(threadId);
      values = (state.values ?? {}) as Record<string, unknown>;
      fromState = true;
      const interrupt = pendingInterrupts(state.tasks as never)[0];
      if (interrupt) translator.clarification ??= toClarification(interrupt.id ?? "", interrupt.value);
    }
    const messages = messagesIn(values);
    if (!translator.clarification) {
      const asked = endedWithQuestion(messages);
      if (asked) translator.clarification = asked;
    }
    const reply = run.before && !fromState ? replyFromState(run.before, messages) : replyAfterLastHuman(messages);
    return translator.finish(reply);
  }

  /** Creates the server thread once, with the conversation's labels as metadata. */
  async #ensureThread(threadId: string, options: RunOptions, signal: AbortSignal): Promise<void> {
    if (this.#known.has(threadId)) return;
    const metadata: Record<string, string> = { source: "antler", ...options.context, ...options.origin };
    if (options.user?.id) metadata.user_id = options.user.id;
    if (options.user?.name) metadata.user_name = options.user.name;
    await this.#client.threads.create({ threadId, ifExists: "do_nothing", metadata, signal });
    this.#known.add(threadId);
  }

  /** How an answer goes in: a resume of the open interrupt, or a new message after a DeerFlow-style question. */
  async #resumePayload(threadId: string, answer: string | ApprovalAnswer, interruptId?: string): Promise<Payload | undefined> {
    const state = await this.#client.threads.getState(threadId);
    const pending = pendingInterrupts(state.tasks as never);
    if (pending.length > 0) return { command: { resume: resumeValue(pending, answer, interruptId) } };
    if (typeof answer === "string" && endedWithQuestion(messagesIn(state.values))) return { input: userInput(answer) };
    return undefined;
  }

  /** Cancels the server run behind `run` (found by its tag if its id never arrived) and waits for it. */
  async #cancelServerRun(threadId: string, run: RemoteRun, tag: string | undefined): Promise<void> {
    try {
      let runId = run.runId;
      if (!runId && tag) {
        const runs = await this.#client.runs.list(threadId, { limit: 10 });
        runId = runs.find((r) => (r.metadata as Record<string, unknown> | undefined)?.[TAG_KEY] === tag)?.run_id;
      }
      if (runId) await this.#client.runs.cancel(threadId, runId, true, "interrupt");
    } catch (err) {
      this.#logger.warn({ err: loggable(err), threadId, runId: run.runId }, "could not cancel the server run");
    }
  }

  async closePending(threadId: string, reason: string = CLOSED_CALL_TEXT.stopped): Promise<boolean> {
    if (this.#active.has(threadId)) return false;
    const state = await this.#client.threads.getState(threadId);
    if (pendingInterrupts(state.tasks as never).length === 0) return false;
    const closed = closeOpenCalls(messagesIn(state.values), reason).map(wire);
    if (closed.length === 0) return false;
    await this.#writeAsTools(threadId, closed);
    return true;
  }

  /** Writes messages to the server thread as the tools node would; a graph without one takes them as its last node's. */
  async #writeAsTools(threadId: string, messages: Record<string, unknown>[]): Promise<void> {
    try {
      await this.#client.threads.updateState(threadId, { values: { messages }, asNode: "tools" });
    } catch {
      await this.#client.threads.updateState(threadId, { values: { messages } });
    }
  }

  /** After a failed or stopped run: close open tool calls and keep the text the user saw. */
  async #repair(threadId: string, run: RemoteRun): Promise<void> {
    try {
      const state = await this.#client.threads.getState(threadId);
      const messages = messagesIn(state.values);
      if (pendingInterrupts(state.tasks as never).length > 0) return;
      const repairs: BaseMessage[] = closeOpenCalls(messages, CLOSED_CALL_TEXT.failed);
      const { turnText, turnId } = run.translator;
      const partial = turnText && !turnStored(messages, turnText, turnId) ? turnText : "";
      const values = [
        ...repairs.map(wire),
        ...(partial ? [{ type: "ai", content: partial, id: `partial-${randomUUID()}` }] : []),
      ];
      if (values.length === 0) return;
      await this.#writeAsTools(threadId, values);
    } catch (err) {
      this.#logger.warn({ err: loggable(err), threadId }, "could not repair the server thread after a failed run");
    }
  }

  #noteFailure(detail: string, unreachable: boolean): void {
    this.#lastError = { message: detail, at: new Date().toISOString() };
    if (unreachable) this.#reachable = false;
  }
}
