/**
 * One remote run's stream: the parts the server sends (`messages-tuple` for the reply text and
 * reasoning, `updates` for tools and interrupts, `values` for the state, `custom` for progress) turned into RunEvents, and the
 * closing event read from the state the run left, so the reply is exactly what the server stored.
 */
import { randomUUID } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import { isHumanMessage } from "@langchain/core/messages";
import type { Client } from "@langchain/langgraph-sdk";
import { userContent } from "../content.js";
import { pendingInterrupts, toClarification } from "../interrupts.js";
import { type RunTranslator, replyFromState } from "../run-events.js";
import type { RunEvent, RunImage } from "../types.js";
import { artifactKeys } from "./artifacts.js";
import { RemoteRunError } from "./errors.js";
import { endedWithQuestion, messagesIn, toStreamedMessage, toUpdate } from "./messages.js";

export const STREAM_MODES: Array<"messages-tuple" | "updates" | "values" | "custom"> = [
  "messages-tuple",
  "updates",
  "values",
  "custom",
];

/** One part of the server's stream. */
export type StreamPart = { event: string; data: unknown };

/** One run's progress. */
export interface RemoteRun {
  translator: RunTranslator;
  runId?: string;
  /** Ids of the messages in the run's first state, to tell its new replies apart. */
  before?: Set<string>;
  /** The `artifacts` entries of the run's first state, to tell the files it presented apart. */
  artifactsBefore?: Set<string>;
  /** The newest full state the run streamed. */
  last?: Record<string, unknown>;
  ended: boolean;
}

/** The input of a run: the user's message, with its images as blocks after the text. */
export function userInput(text: string, images?: RunImage[]): Record<string, unknown> {
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

/** Events for one part of the server's stream; an `error` part throws a RemoteRunError. */
export function handlePart(part: StreamPart, run: RemoteRun): RunEvent[] {
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
  // A tool's progress counts from any depth: a subagent's tools report through it too.
  if (mode === "custom") return run.translator.handle("custom", part.data);
  // Tool events and state come from the top graph only; subgraph text streams above when asked for.
  if (namespace !== undefined) return [];
  if (mode === "updates") return run.translator.handle("updates", toUpdate(part.data));
  if (mode === "values" && Array.isArray((part.data as { messages?: unknown } | null)?.messages)) {
    const values = part.data as Record<string, unknown>;
    if (!run.before) {
      run.before = ids(messagesIn(values));
      run.artifactsBefore = artifactKeys(values);
    }
    run.last = values;
  }
  return [];
}

/** The closing event: the question the run ended on, or its reply as the server stored it; `run.last` is then the final state. */
export async function finishRun(client: Client, threadId: string, run: RemoteRun): Promise<RunEvent> {
  const { translator } = run;
  let values = run.last;
  let fromState = false;
  if (!values || (!run.before && !translator.clarification)) {
    // A joined run that had ended before we joined streams nothing: read what it left.
    const state = await client.threads.getState(threadId);
    values = (state.values ?? {}) as Record<string, unknown>;
    fromState = true;
    const interrupt = pendingInterrupts(state.tasks as never)[0];
    if (interrupt) translator.clarification ??= toClarification(interrupt.id ?? "", interrupt.value);
  }
  run.last = values;
  const messages = messagesIn(values);
  if (!translator.clarification) {
    const asked = endedWithQuestion(messages);
    if (asked) translator.clarification = asked;
  }
  const reply = run.before && !fromState ? replyFromState(run.before, messages) : replyAfterLastHuman(messages);
  return translator.finish(reply);
}
