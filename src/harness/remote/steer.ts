/**
 * Steering a run on a LangGraph API server. The API cannot add a message to a run that is going,
 * and the server runs the graph ahead of our reading of its stream, so the harness switches
 * runs: when a steered message waits and the stream stands right after a tools step (every tool
 * call it started has ended), it stops reading, interrupts the server run (`runs.cancel` with
 * `action: "interrupt"`, which keeps the thread as of its last checkpoint, the tool results
 * included), reads the thread, and starts a new run on it with the message as its input
 * (`multitaskStrategy: "interrupt"`, the first run's tag in its metadata, so `reattach` finds the
 * run that is going). The caller reads one stream: the events of both runs, one closing event.
 *
 * What the thread holds after the interrupt decides what happens:
 * - the tool results are the newest messages: the new run takes the message (`taken` once the
 *   server announced the run);
 * - the model already asked for more tools: a new run without input runs them, the message
 *   waits for the next tools step;
 * - the run ended or asks a question: the stream ends there, and the message is `missed`.
 */
import type { Client } from "@langchain/langgraph-sdk";
import type { Logger } from "../../log/logger.js";
import { pendingInterrupts } from "../interrupts.js";
import { STEERED_KEY, ToolSteps, takesSteer } from "../steer/boundary.js";
import type { SteeredText, SteerRun } from "../steer/mailbox.js";
import type { RunEvent } from "../types.js";
import { loggable } from "./errors.js";
import { messagesIn } from "./messages.js";
import { handlePart, type RemoteRun, type StreamPart } from "./stream.js";

/** What switching runs needs from the harness. */
export interface RemoteSteering {
  client: Client;
  threadId: string;
  run: RemoteRun;
  steer: SteerRun;
  logger: Logger;
  /** The run's own signal (cancel, timeout, shutdown). */
  signal: AbortSignal;
  /**
   * A new server run on the thread, with the first run's settings and tag: `input` null goes on
   * from the thread's checkpoint. `signal` stops only the reading of its stream.
   */
  start(input: Record<string, unknown> | null, signal: AbortSignal): AsyncIterable<StreamPart>;
}

const ARRIVED = Symbol("arrived");

/** A reader's signal that the run's own signal also aborts. */
export function readerOf(run: AbortSignal): AbortController {
  const reader = new AbortController();
  if (run.aborted) reader.abort(run.reason);
  else run.addEventListener("abort", () => reader.abort(run.reason), { once: true });
  return reader;
}

/** The thread's steered input: the messages as user messages marked as steered. */
function steeredInput(steered: SteeredText[]): Record<string, unknown> {
  const messages = steered.map(({ text, id }) => ({
    type: "human",
    content: text,
    id,
    additional_kwargs: { [STEERED_KEY]: true },
  }));
  return { messages };
}

/**
 * The RunEvents of the server run `first` (read under `reader`), switched to a new run each
 * time a steered message waits right after a tools step. Throws what the stream throws.
 */
export async function* steeredEvents(
  first: AsyncIterable<StreamPart>,
  reader: AbortController,
  s: RemoteSteering,
): AsyncGenerator<RunEvent> {
  const steps = new ToolSteps();
  let parts = first[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<StreamPart>> | undefined;
  let arrival: Promise<typeof ARRIVED> | undefined;
  for (;;) {
    if (s.steer.waiting > 0 && steps.afterTools) {
      reader.abort();
      pending?.catch(() => undefined);
      const input = await switchInput(s);
      if (input === undefined) return; // the run ended: its closing event is read from the thread
      pending = undefined;
      steps.reset();
      reader = readerOf(s.signal);
      parts = s.start(input, reader.signal)[Symbol.asyncIterator]();
      continue;
    }
    pending ??= parts.next();
    arrival ??= steps.afterTools ? s.steer.arrival().then(() => ARRIVED) : undefined;
    const next = arrival ? await Promise.race([pending, arrival]) : await pending;
    if (next === ARRIVED) {
      arrival = undefined;
      continue;
    }
    pending = undefined;
    if (next.done) return;
    if (next.value.event === "metadata") s.steer.confirm(); // the server took the run and its input
    for (const event of handlePart(next.value, s.run)) {
      steps.see(event);
      if (!steps.afterTools) arrival = undefined;
      yield event;
    }
  }
}

/**
 * Interrupts the server run and reads the thread: the next run's input (the steered messages,
 * or null to go on), or undefined when the run is over.
 */
async function switchInput(s: RemoteSteering): Promise<Record<string, unknown> | null | undefined> {
  const { client, threadId, run } = s;
  if (run.runId) {
    try {
      await client.runs.cancel(threadId, run.runId, true, "interrupt", { signal: s.signal });
    } catch (err) {
      // A run that ended meanwhile cannot be cancelled; the thread says what it left.
      s.logger.debug({ err: loggable(err), threadId, runId: run.runId }, "could not interrupt the server run to steer");
    }
  }
  s.signal.throwIfAborted();
  const state = await client.threads.getState(threadId, undefined, { signal: s.signal });
  const messages = messagesIn(state.values);
  const questions = pendingInterrupts(state.tasks as never).length;
  run.runId = undefined; // the next run's metadata names it
  if (takesSteer(messages, questions)) {
    s.logger.info({ threadId, messages: s.steer.waiting }, "steering: a new server run takes the waiting messages");
    return steeredInput(s.steer.take());
  }
  if (questions === 0 && messages.length > 0 && openCalls(state.next)) return null;
  // The run ended (a reply, a question) before it could take them: finish from the thread.
  run.last = undefined;
  return undefined;
}

/** Whether the thread has steps left to run (the model's new tool calls). */
function openCalls(next: unknown): boolean {
  return Array.isArray(next) && next.length > 0;
}
