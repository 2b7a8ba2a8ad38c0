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
 *
 * One run per thread at a time (thread-runs.ts); a run's stream parts become RunEvents in
 * stream.ts, and the server threads are read and written in threads.ts.
 */
import { Client } from "@langchain/langgraph-sdk";
import type { RemoteAgentConfig } from "../../config/remote.js";
import { AntlerError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { silentLogger } from "../../log/logger.js";
import type { AgentFiles } from "../files.js";
import { AgentHealth } from "../health.js";
import { historyOf } from "../history.js";
import { pendingInterrupts, toClarification } from "../interrupts.js";
import { CLOSED_CALL_TEXT } from "../repair.js";
import { MESSAGES } from "../run-errors.js";
import { anyReplyNode, RunTranslator } from "../run-events.js";
import { SteerMailbox, type SteerOutcome, type SteerRun } from "../steer/mailbox.js";
import { ThreadRuns } from "../thread-runs.js";
import { checkToolArgs } from "../tool-args.js";
import type {
  AgentStatus,
  ApprovalAnswer,
  ApprovalRequest,
  Harness,
  HistoryEntry,
  RunEvent,
  RunOptions,
  ThreadInfo,
} from "../types.js";
import type { UsageSink, UsageTarget } from "../usage.js";
import { ArtifactFiles } from "./artifact-files.js";
import { runContext } from "./context.js";
import { runInput } from "./cut-off.js";
import { loggable, toRemoteFailure } from "./errors.js";
import { endedWithQuestion, messagesIn } from "./messages.js";
import { readerOf, steeredEvents } from "./steer.js";
import { finishRun, type RemoteRun, STREAM_MODES, type StreamPart } from "./stream.js";
import { type Payload, ServerThreads, TAG_KEY } from "./threads.js";

export interface RemoteHarnessOptions {
  settings: RemoteAgentConfig;
  logger?: Logger;
  /**
   * Receives the usage the server's AI messages carry, as `chat` under the assistant id. Model
   * calls that write no message (a title, a summary) stay on the server and are not reported.
   */
  onUsage?: UsageSink;
  /** The gateway's thread folders and file outbox: the files a run presents go there (artifact-files.ts). */
  files?: AgentFiles;
}

/** How long a status probe waits for the server. */
const PROBE_TIMEOUT_MS = 5_000;
/** Runs of one thread searched for a tag after a restart. */
const REATTACH_SEARCH = 50;

type Start = { kind: "run"; text: string } | { kind: "resume"; text: string | ApprovalAnswer } | { kind: "join"; runId: string };

export class RemoteHarness implements Harness {
  readonly #client: Client;
  readonly #settings: RemoteAgentConfig;
  readonly #logger: Logger;
  readonly #chatUsage: UsageTarget | undefined;
  readonly #threads: ServerThreads;
  readonly #runs = new ThreadRuns();
  readonly #steers = new SteerMailbox();
  readonly #health = new AgentHealth();
  readonly #artifacts: ArtifactFiles | undefined;

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
    this.#threads = new ServerThreads(this.#client, this.#logger);
    if (options.settings.artifacts.enabled) {
      this.#artifacts = new ArtifactFiles({ settings: options.settings, files: options.files, logger: this.#logger });
    }
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
    return this.#runs.cancel(threadId);
  }

  /** Switches the thread's run to a new server run with the message, after its tools step (steer.ts). */
  steer(threadId: string, text: string, options: { id?: string } = {}): Promise<SteerOutcome> {
    return this.#steers.steer(threadId, text, options.id);
  }

  async reattach(threadId: string, tag: string, options: RunOptions = {}): Promise<AsyncIterable<RunEvent> | undefined> {
    const runId = await this.#threads.findRun(threadId, tag, REATTACH_SEARCH);
    if (!runId) return undefined;
    this.#threads.know(threadId);
    return this.#drive(threadId, { kind: "join", runId }, options);
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
      running: this.#runs.has(threadId),
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
      reachable: this.#health.reachable,
      last_error: this.#health.lastError,
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
      this.#health.reachable = true;
      return `${url} is reachable; assistant ${id} runs graph ${graph}`;
    } catch (err) {
      const failure = toRemoteFailure(err, { url, assistant: id, aborted: false });
      this.#health.fail(failure.detail ?? failure.message, failure.message === MESSAGES.agentUnreachable);
      throw new Error(failure.detail ?? failure.message);
    }
  }

  async closePending(threadId: string, reason: string = CLOSED_CALL_TEXT.stopped): Promise<boolean> {
    if (this.#runs.has(threadId)) return false;
    return this.#threads.closePending(threadId, reason);
  }

  async close(): Promise<void> {
    // Runs go on on the server: a restarted gateway reattaches to them. Only our reading stops.
    this.#runs.close(new Error("the gateway is closing"));
  }

  #drive(threadId: string, start: Start, options: RunOptions): AsyncGenerator<RunEvent> {
    return this.#runs.drive(threadId, options.signal, (controller) =>
      this.#steers.during(threadId, (steer) => this.#run(threadId, start, options, controller, steer)),
    );
  }

  async *#run(
    threadId: string,
    start: Start,
    options: RunOptions,
    controller: AbortController,
    steer: SteerRun,
  ): AsyncGenerator<RunEvent> {
    const run: RemoteRun = { translator: new RunTranslator(anyReplyNode, this.#chatUsage), ended: false };
    try {
      yield* this.#stream(threadId, start, options, controller.signal, run, steer);
    } finally {
      // A reader that stopped early: stop the server run too, unless the gateway is closing
      // (then the run goes on and is reattached after the restart).
      if (!run.ended && !this.#runs.closed) {
        controller.abort();
        await this.#threads.cancelRun(threadId, run, options.tag);
        await this.#threads.repair(threadId, run);
      }
    }
  }

  /** The server's stream of a run: a join of a run found after a restart, or a new run or resume. */
  async #events(threadId: string, start: Start, options: RunOptions, signal: AbortSignal, run: RemoteRun) {
    if (start.kind === "join") {
      run.runId = start.runId;
      return this.#client.runs.joinStream(threadId, start.runId, { lastEventId: "-1", streamMode: STREAM_MODES, signal });
    }
    await this.#threads.ensure(threadId, options, signal);
    const payload =
      start.kind === "resume"
        ? await this.#threads.resumePayload(threadId, start.text, options.interruptId)
        : { input: await runInput(this.#client, threadId, start.text, options) };
    if (!payload) return undefined;
    return this.#newRun(threadId, payload, options, signal);
  }

  /** A server run on the thread: resumable, going on without us, tagged; `strategy` for a thread that has one going. */
  #newRun(
    threadId: string,
    payload: Payload | { input: null },
    options: RunOptions,
    signal: AbortSignal,
    strategy = this.#settings.multitask_strategy,
  ): AsyncIterable<StreamPart> {
    return this.#client.runs.stream(threadId, this.#settings.assistant_id, {
      ...payload,
      streamMode: STREAM_MODES,
      streamSubgraphs: this.#settings.stream_subgraphs,
      config: this.#settings.config,
      context: runContext(this.#settings, threadId, options.user),
      multitaskStrategy: strategy,
      onDisconnect: "continue",
      streamResumable: true,
      ...(options.tag ? { metadata: { [TAG_KEY]: options.tag } } : {}),
      signal,
    }) as AsyncIterable<StreamPart>;
  }

  async *#stream(
    threadId: string,
    start: Start,
    options: RunOptions,
    signal: AbortSignal,
    run: RemoteRun,
    steer: SteerRun,
  ): AsyncGenerator<RunEvent> {
    const { url, assistant_id: assistant } = this.#settings;
    const closed = () => this.#runs.closed;
    try {
      signal.throwIfAborted();
      // Reading stops on its own signal when a steered message moves the run to a new server run (steer.ts).
      const reader = readerOf(signal);
      const events = await this.#events(threadId, start, options, reader.signal, run);
      if (!events) {
        run.ended = true;
        yield { type: "error", code: "no_pending", message: MESSAGES.no_pending };
        return;
      }
      const next = (input: Record<string, unknown> | null, s: AbortSignal) =>
        this.#newRun(threadId, { input }, options, s, "interrupt");
      const steering = { client: this.#client, threadId, run, steer, logger: this.#logger, signal, start: next };
      yield* steeredEvents(events, reader, steering);
      signal.throwIfAborted();
      const closing = await finishRun(this.#client, threadId, run);
      this.#health.reachable = true;
      run.ended = true;
      if (closing.type === "done" || closing.type === "clarification") {
        await this.#artifacts?.afterRun(threadId, run, options.user, signal);
      }
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
      const aborted = signal.aborted && !closed();
      const failure = toRemoteFailure(err, { url, assistant, aborted, reason: signal.reason });
      if (failure.detail) {
        this.#logger.warn({ err: loggable(err), threadId, code: failure.code }, "remote run failed");
        this.#health.fail(failure.detail, failure.message === MESSAGES.agentUnreachable);
      } else {
        this.#logger.info({ threadId, code: failure.code }, "remote run stopped");
      }
      if (!closed()) {
        if (aborted) await this.#threads.cancelRun(threadId, run, options.tag);
        await this.#threads.repair(threadId, run);
      }
      run.ended = true;
      yield { type: "error", code: failure.code, message: failure.message };
    }
  }
}
