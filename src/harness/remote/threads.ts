/**
 * The server threads behind a remote agent, as the remote harness reads and writes them outside
 * a run's stream: created once with the conversation's labels, the payload an answer goes in as,
 * a server run found by its message's tag and cancelled, open tool calls closed and the text the
 * user saw kept after a failed run.
 */
import { randomUUID } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import type { Client } from "@langchain/langgraph-sdk";
import type { Logger } from "../../log/logger.js";
import { pendingInterrupts, resumeValue } from "../interrupts.js";
import { CLOSED_CALL_TEXT, closeOpenCalls, turnStored } from "../repair.js";
import type { ApprovalAnswer, RunOptions } from "../types.js";
import { userMetadata } from "./context.js";
import { loggable } from "./errors.js";
import { endedWithQuestion, messagesIn } from "./messages.js";
import { type RemoteRun, userInput } from "./stream.js";

/** Run metadata key that holds the tag of the message behind the run. */
export const TAG_KEY = "antler_tag";

/** How a run's input goes to the server: a new message, or a resume of the open interrupt. */
export type Payload = { input: Record<string, unknown> } | { command: { resume: unknown } };

/** Plain wire form of a repair message. */
function wire(message: BaseMessage): Record<string, unknown> {
  const m = message as BaseMessage & { tool_call_id?: string; status?: string };
  return { type: m.type, content: m.content, id: m.id, name: m.name, tool_call_id: m.tool_call_id, status: m.status };
}

export class ServerThreads {
  /** Server threads known to exist, so each is created once per process. */
  readonly #known = new Set<string>();

  constructor(
    private readonly client: Client,
    private readonly logger: Logger,
  ) {}

  /** Notes a thread as existing on the server (a run was found on it). */
  know(threadId: string): void {
    this.#known.add(threadId);
  }

  /** Creates the server thread once, with the conversation's labels and its first user as metadata. */
  async ensure(threadId: string, options: RunOptions, signal: AbortSignal): Promise<void> {
    if (this.#known.has(threadId)) return;
    const metadata = { source: "antler", ...options.context, ...options.origin, ...userMetadata(options.user) };
    await this.client.threads.create({ threadId, ifExists: "do_nothing", metadata, signal });
    this.#known.add(threadId);
  }

  /**
   * The id of the newest of the thread's last `limit` runs that carries `tag` (a steered message
   * moves a turn to a new run with the same tag). Sorted here: not every server lists newest first.
   */
  async findRun(threadId: string, tag: string, limit: number): Promise<string | undefined> {
    const runs = await this.client.runs.list(threadId, { limit });
    const tagged = runs.filter((r) => (r.metadata as Record<string, unknown> | undefined)?.[TAG_KEY] === tag);
    return tagged.sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))[0]?.run_id;
  }

  /** How an answer goes in: a resume of the open interrupt, or a new message after a DeerFlow-style question. */
  async resumePayload(threadId: string, answer: string | ApprovalAnswer, interruptId?: string): Promise<Payload | undefined> {
    const state = await this.client.threads.getState(threadId);
    const pending = pendingInterrupts(state.tasks as never);
    if (pending.length > 0) return { command: { resume: resumeValue(pending, answer, interruptId) } };
    if (typeof answer === "string" && endedWithQuestion(messagesIn(state.values))) return { input: userInput(answer) };
    return undefined;
  }

  /** Cancels the server run behind `run` (found by its tag if its id never arrived) and waits for it. */
  async cancelRun(threadId: string, run: RemoteRun, tag: string | undefined): Promise<void> {
    try {
      let runId = run.runId;
      if (!runId && tag) runId = await this.findRun(threadId, tag, 10);
      if (runId) await this.client.runs.cancel(threadId, runId, true, "interrupt");
    } catch (err) {
      this.logger.warn({ err: loggable(err), threadId, runId: run.runId }, "could not cancel the server run");
    }
  }

  /** Closes the thread's open question with `reason` as each paused call's result; false when none was open. */
  async closePending(threadId: string, reason: string): Promise<boolean> {
    const state = await this.client.threads.getState(threadId);
    if (pendingInterrupts(state.tasks as never).length === 0) return false;
    const closed = closeOpenCalls(messagesIn(state.values), reason).map(wire);
    if (closed.length === 0) return false;
    await this.#writeAsTools(threadId, closed);
    return true;
  }

  /** After a failed or stopped run: close open tool calls and keep the text the user saw. */
  async repair(threadId: string, run: RemoteRun): Promise<void> {
    try {
      const state = await this.client.threads.getState(threadId);
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
      this.logger.warn({ err: loggable(err), threadId }, "could not repair the server thread after a failed run");
    }
  }

  /** Writes messages to the server thread as the tools node would; a graph without one takes them as its last node's. */
  async #writeAsTools(threadId: string, messages: Record<string, unknown>[]): Promise<void> {
    try {
      await this.client.threads.updateState(threadId, { values: { messages }, asNode: "tools" });
    } catch {
      await this.client.threads.updateState(threadId, { values: { messages } });
    }
  }
}
