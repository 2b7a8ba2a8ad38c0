/**
 * The embedded harness: runs the lead agent per thread, streams RunEvents, pauses on
 * clarification interrupts and resumes them, and keeps checkpoints in SQLite.
 *
 * One run per thread at a time; a second gets a `busy` error. After an error, a cancel or a
 * caller that stops reading, the thread is repaired (see repair.ts) so the next run on it works;
 * a thread a dead process left with open tool calls is repaired when its next run starts.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import type { AppConfig } from "../config/schema.js";
import type { Logger } from "../log/logger.js";
import { silentLogger } from "../log/logger.js";
import { type AntlerAgent, makeLeadAgent } from "./agent.js";
import { McpServers } from "./mcp/index.js";
import type { AntlerRunContext } from "./middleware/dynamic-context.js";
import { closeOpenCalls, repairThread } from "./repair.js";
import { MESSAGES, type RunErrorCode, toRunError } from "./run-errors.js";
import { RunTranslator, toClarification } from "./run-events.js";
import { ASK_CLARIFICATION, loadConfigTools } from "./tools/index.js";
import type { Clarification, Harness, RunEvent, RunOptions, ThreadInfo } from "./types.js";

export interface AgentHarnessOptions {
  agent: AntlerAgent;
  /** Name of the model serving the threads, for `getThread`. */
  modelName: string;
  logger?: Logger;
  /** Max graph steps per run. */
  recursionLimit?: number;
  /** Called by `close()` after runs stopped: release the checkpointer's resources. */
  onClose?: () => void | Promise<void>;
  /** MCP servers whose tools the agent holds; closed (processes stopped) by `close()`. */
  mcp?: McpServers;
}

interface ActiveRun {
  controller: AbortController;
}

/** One run's progress, shared by the driver and the stream so either can finish it off. */
interface StreamState {
  translator: RunTranslator;
  /** The graph was asked to run: from here on, stopping needs a repair. */
  started: boolean;
  /** The closing event was handed out (or a repair already ran). */
  ended: boolean;
}

function errorEvent(code: RunErrorCode, message: string): RunEvent {
  return { type: "error", code, message };
}

export class AgentHarness implements Harness {
  readonly modelName: string;
  /** The MCP servers behind the agent's MCP tools, with their state (for status and doctor). */
  readonly mcp: McpServers | undefined;
  readonly #agent: AntlerAgent;
  readonly #logger: Logger;
  readonly #recursionLimit: number;
  readonly #onClose: (() => void | Promise<void>) | undefined;
  readonly #active = new Map<string, ActiveRun>();
  #closed = false;

  constructor(options: AgentHarnessOptions) {
    this.#agent = options.agent;
    this.modelName = options.modelName;
    this.#logger = options.logger ?? silentLogger();
    this.#recursionLimit = options.recursionLimit ?? 50;
    this.#onClose = options.onClose;
    this.mcp = options.mcp;
  }

  run(threadId: string, text: string, options: RunOptions = {}): AsyncIterable<RunEvent> {
    return this.#drive(threadId, "run", text, options);
  }

  resume(threadId: string, answer: string, options: RunOptions = {}): AsyncIterable<RunEvent> {
    return this.#drive(threadId, "resume", answer, options);
  }

  cancel(threadId: string): boolean {
    const active = this.#active.get(threadId);
    if (!active) return false;
    active.controller.abort();
    return true;
  }

  async getThread(threadId: string): Promise<ThreadInfo | undefined> {
    const running = this.#active.has(threadId);
    const state = await this.#agent.graph.getState({ configurable: { thread_id: threadId } });
    const values = (state.values ?? {}) as { title?: string };
    if (!state.createdAt && !running) return undefined;
    const info: ThreadInfo = {
      threadId,
      messageCount: messagesOf(state.values).length,
      model: this.modelName,
      running,
    };
    if (values.title) info.title = values.title;
    const pending = pendingOf(state.tasks);
    if (pending) info.pending = pending;
    return info;
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

  async *#drive(threadId: string, kind: "run" | "resume", text: string, options: RunOptions): AsyncGenerator<RunEvent> {
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
    const abort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", abort, { once: true });
    if (options.signal?.aborted) controller.abort(options.signal.reason);
    const run: StreamState = { translator: new RunTranslator(), started: false, ended: false };
    try {
      let input: unknown;
      try {
        input = await this.#input(threadId, kind, text);
      } catch (err) {
        this.#logger.error({ err, threadId }, "could not read the thread before the run");
        run.ended = true;
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

  /** The graph input of a run or a resume; undefined for a resume with nothing pending. */
  async #input(threadId: string, kind: "run" | "resume", text: string): Promise<unknown> {
    const state = await this.#agent.graph.getState({ configurable: { thread_id: threadId } });
    const pending = pendingOf(state.tasks);
    if (kind === "resume") return pending ? new Command({ resume: text }) : undefined;
    if (pending) {
      // A new message instead of an answer drops the question; its tool call gets a result.
      await repairThread(this.#agent, threadId, { reason: "abandoned" });
    } else if (closeOpenCalls(messagesOf(state.values), "").length > 0) {
      // No run of ours is active, yet tool calls are open: the process running it died.
      await repairThread(this.#agent, threadId, { reason: "failed" });
    }
    return { messages: [new HumanMessage({ content: text, id: randomUUID() })] };
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
      const stream = await this.#agent.stream(
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
      if (run.started) await this.#repair(threadId, translator);
      run.ended = true;
      yield errorEvent(failure.code, failure.message);
      return;
    }
    run.ended = true;
    yield translator.finish();
  }

  async #repair(threadId: string, translator: RunTranslator): Promise<void> {
    try {
      const partial = { partialText: translator.turnText, partialId: translator.turnId };
      await repairThread(this.#agent, threadId, { ...partial, reason: "failed" });
    } catch (err) {
      this.#logger.error({ err, threadId }, "could not repair the thread after a failed run");
    }
  }
}

function messagesOf(values: unknown): BaseMessage[] {
  return ((values as { messages?: BaseMessage[] } | undefined)?.messages ?? []) as BaseMessage[];
}

/** The first open clarification among a state's pending tasks. */
function pendingOf(tasks: ReadonlyArray<{ interrupts?: ReadonlyArray<{ id?: string; value?: unknown }> }> | undefined) {
  for (const task of tasks ?? []) {
    const found = task.interrupts?.find((i) => i.value !== undefined);
    if (found) return toClarification(found.id ?? "", found.value) satisfies Clarification;
  }
  return undefined;
}

export interface CreateHarnessOptions {
  config: AppConfig;
  /** Folder of the config file; storage.path and relative `use:` resolve against it. */
  baseDir: string;
  logger: Logger;
  /** Extra tools, besides the configured ones and those of `mcp_servers`. */
  tools?: StructuredToolInterface[];
}

/** Opens the checkpoint database (WAL) and builds the lead agent from config. */
export async function createHarness(options: CreateHarnessOptions): Promise<AgentHarness> {
  const { config, baseDir, logger } = options;
  const file = path.resolve(baseDir, config.storage.path);
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  const extra = options.tools ?? [];
  let configTools: StructuredToolInterface[];
  try {
    configTools = await loadConfigTools(config.tools, { baseDir, logger });
  } catch (err) {
    db.close();
    throw err;
  }
  // MCP servers start in parallel, each bounded by its timeout; a failed one only loses its tools.
  // The names the model sees are the tools' own names, which may differ from their config names.
  const mcp = await McpServers.start(config.mcp_servers, {
    baseDir,
    logger,
    reservedNames: [...configTools, ...extra].map((t) => t.name).concat(ASK_CLARIFICATION),
  });
  try {
    const checkpointer = new SqliteSaver(db);
    const tools = [...extra, ...mcp.tools];
    const lead = await makeLeadAgent(config, { baseDir, logger, tools, configTools, checkpointer });
    logger.info({ model: lead.modelName, tools: lead.toolNames, storage: file }, "harness ready");
    return new AgentHarness({
      agent: lead.agent,
      modelName: lead.modelName,
      logger,
      recursionLimit: config.agent.recursion_limit,
      mcp,
      onClose: () => {
        db.close();
      },
    });
  } catch (err) {
    await mcp.close();
    db.close();
    throw err;
  }
}
