/**
 * Turns the agent's LangGraph stream (`streamMode: ["messages", "updates", "custom"]`) into RunEvents.
 *
 * Visible text: every text token the model streams in the model node, including text the
 * model writes before calling a tool — also in the turn that calls `ask_clarification` (the
 * user sees it, so it is part of the reply). Tokens from model calls inside middleware (title,
 * summary) are not reply text. When a later model turn adds text after an earlier one, a blank
 * line separates them. Assistant messages that middleware writes as notices (e.g. loop
 * detection's stop notice) are streamed as text too. `done.text` is all of that, concatenated.
 *
 * Tool events skip `ask_clarification`: its question arrives as the `clarification` event.
 * `tool_start` is sent when the model's response completes; a call that loop detection then
 * strips never runs, so it gets no `tool_end`.
 *
 * Progress (`custom` chunks) and reasoning (in the reply nodes' streamed chunks, never reply
 * text) are read by live-events.ts; a progress chunk without an id gets the one open tool call's.
 *
 * A model turn whose tool calls a run limit dropped is marked (token-budget.ts): `done.limit` says
 * so, and the chat adds a notice after the reply.
 *
 * Usage: the model turns' AI messages in `updates` carry what the model reported. Each is counted
 * once (by message id), summed into `done.usage`, and reported as `chat` when its update arrives,
 * so a run that ends in a question, an error or a cancel still reports the turns it made.
 *
 * Which node's text is reply text: the embedded agent's model node only. A user's graph can
 * have any nodes, so there every top-graph node counts except `tools` (a model called inside a
 * tool is not the reply) and middleware hooks (`Name.before_model` and the like).
 */
import { type BaseMessage, isAIMessage, isAIMessageChunk, isToolMessage } from "@langchain/core/messages";
import { toClarification } from "./interrupts.js";
import { progressOf, reasoningOf } from "./live-events.js";
import { NOTICE_FLAG } from "./middleware/loop-detection.js";
import { limitOf } from "./middleware/token-budget.js";
import { ASK_CLARIFICATION } from "./tools/clarification.js";
import type { Clarification, RunEvent, RunLimit, Usage } from "./types.js";
import { addUsage, reportUsage, type UsageTarget, usageOf } from "./usage.js";

/** LangGraph node names that createAgent uses. */
export const MODEL_NODE = "model_request";
const TOOLS_NODE = "tools";
const INTERRUPT_KEY = "__interrupt__";
const METADATA_KEY = "__metadata__";

/** Whose streamed text is reply text. */
export type ReplyNodes = (node: string) => boolean;

/** The embedded agent: only its model node. */
export const modelNodeOnly: ReplyNodes = (node) => node === MODEL_NODE;

/** Any graph: every node but the tools node and middleware hooks. */
export const anyReplyNode: ReplyNodes = (node) => node !== TOOLS_NODE && !node.includes(".");

export class RunTranslator {
  /** Everything streamed as reply text so far. */
  text = "";
  /** Text of the model turn in flight; it is not in the state until the turn completes. */
  turnText = "";
  /** Message id of the model turn in flight, when the model gives one. */
  turnId: string | undefined;
  /** Usage of the run's model turns so far, each counted once. */
  usage: Usage | undefined;
  clarification: Clarification | undefined;
  /** The limit that dropped tool calls of the run (token-budget.ts), for `done.limit`. */
  limit: RunLimit | undefined;
  /** Ids of the messages whose usage was counted: a message may show up in more than one update. */
  readonly #counted = new Set<string>();
  /** Ids of the tool calls started and not ended, to tell whose progress an id-less chunk is. */
  readonly #open = new Set<string>();

  /** `chatUsage`: where each model turn's usage goes, as `chat`, as soon as its message is seen. */
  constructor(
    private readonly replyNodes: ReplyNodes = modelNodeOnly,
    private readonly chatUsage?: UsageTarget,
  ) {}

  /** Events for one stream chunk. */
  handle(mode: string, chunk: unknown): RunEvent[] {
    if (mode === "messages") return this.#message(chunk as [BaseMessage, Record<string, unknown>]);
    if (mode === "updates") return this.#updates(chunk as Record<string, unknown>);
    if (mode === "custom") {
      const progress = progressOf(chunk, this.#open);
      return progress ? [progress] : [];
    }
    return [];
  }

  /** The closing event of a run that ended without error; `reply` replaces the streamed text when given. */
  finish(reply?: string): RunEvent {
    if (this.clarification) return { type: "clarification", ...this.clarification };
    const text = reply ?? this.text;
    return { type: "done", text, ...(this.usage ? { usage: this.usage } : {}), ...(this.limit ? { limit: this.limit } : {}) };
  }

  #message([message, meta]: [BaseMessage, Record<string, unknown>]): RunEvent[] {
    const node = meta?.langgraph_node;
    if (typeof node !== "string" || !this.replyNodes(node) || !isAIMessageChunk(message as never)) return [];
    const reasoning = reasoningOf(message);
    const delta = (message as BaseMessage).text;
    const events: RunEvent[] = reasoning ? [{ type: "reasoning", delta: reasoning }] : [];
    if (!delta) return events;
    this.turnId ??= message.id;
    events.push(this.#emit(delta));
    return events;
  }

  #emit(delta: string): RunEvent {
    // A new turn's text after an earlier turn's text would otherwise run the two together.
    const lead = this.turnText === "" && this.text !== "" && !/\s$/.test(this.text) ? "\n\n" : "";
    this.turnText += delta;
    this.text += lead + delta;
    return { type: "text", delta: lead + delta };
  }

  #updates(update: Record<string, unknown>): RunEvent[] {
    // On resume LangGraph replays the stored results of tasks that finished before the pause
    // (e.g. a tool called next to ask_clarification); the previous run already reported them.
    if ((update?.[METADATA_KEY] as { cached?: boolean } | undefined)?.cached) return [];
    const events: RunEvent[] = [];
    for (const [node, value] of Object.entries(update ?? {})) {
      if (node === INTERRUPT_KEY) {
        this.#interrupt(value);
        continue;
      }
      for (const message of latestVersions(messagesOf(value))) events.push(...this.#stateMessage(node, message));
    }
    return events;
  }

  #stateMessage(node: string, message: BaseMessage): RunEvent[] {
    if (this.replyNodes(node) && isAIMessage(message) && !message.response_metadata?.[NOTICE_FLAG]) {
      this.turnText = "";
      this.turnId = undefined;
      this.#addUsage(message);
      this.limit = limitOf(message) ?? this.limit;
      const calls = (message.tool_calls ?? []).filter((c) => c.name !== ASK_CLARIFICATION);
      for (const c of calls) if (c.id) this.#open.add(c.id);
      return calls.map((c) => ({ type: "tool_start", id: c.id ?? "", name: c.name, args: c.args }) as RunEvent);
    }
    if (isToolMessage(message) && message.name !== ASK_CLARIFICATION) {
      this.#open.delete(message.tool_call_id);
      return [
        {
          type: "tool_end",
          id: message.tool_call_id,
          name: message.name ?? "",
          output: message.text,
          error: message.status === "error",
        },
      ];
    }
    if (isAIMessage(message) && message.response_metadata?.[NOTICE_FLAG] && message.text) {
      const event = this.#emit(message.text);
      this.turnText = "";
      return [event];
    }
    return [];
  }

  #addUsage(message: BaseMessage): void {
    const usage = usageOf(message);
    if (!usage || (message.id && this.#counted.has(message.id))) return;
    if (message.id) this.#counted.add(message.id);
    this.usage = addUsage(this.usage, usage);
    reportUsage(this.chatUsage, "chat", usage);
  }

  #interrupt(value: unknown): void {
    const first = (Array.isArray(value) ? value : [value])[0] as { id?: string; value?: unknown } | undefined;
    if (!first || this.clarification) return;
    this.clarification = toClarification(first.id ?? "", first.value);
  }
}

/**
 * The reply of a run read from the thread's state after it: the text of every assistant message
 * that was not there before the run (`before` holds the ids seen then), blank-line separated as
 * the stream separates turns. Undefined when the state has no new assistant text (a graph whose
 * state has no `messages`): the streamed text is the reply then.
 */
export function replyFromState(before: ReadonlySet<string>, messages: readonly BaseMessage[]): string | undefined {
  const texts = messages
    .filter((m) => isAIMessage(m) && !(m.id && before.has(m.id)))
    .map((m) => m.text)
    .filter((t) => t.trim() !== "");
  if (texts.length === 0) return undefined;
  return texts.reduce((all, t) => (all === "" || /\s$/.test(all) ? all + t : `${all}\n\n${t}`), "");
}

/**
 * Each message once, as its last write in the update has it: a node may write a message and then
 * replace it by id in the same step (loop detection strips the calls of the response it stops).
 */
function latestVersions(messages: BaseMessage[]): BaseMessage[] {
  const last = new Map(messages.map((m, i) => [m.id ?? i, i]));
  return messages.filter((m, i) => last.get(m.id ?? i) === i);
}

/** Messages in one node's update, whatever shape the update has. */
function messagesOf(value: unknown): BaseMessage[] {
  if (Array.isArray(value)) return value.flatMap(messagesOf);
  if (!value || typeof value !== "object") return [];
  const messages = (value as { messages?: unknown }).messages;
  if (Array.isArray(messages)) return messages as BaseMessage[];
  // A Command returned by a node carries its state update in `update`.
  const inner = (value as { update?: unknown }).update;
  return inner ? messagesOf(inner) : [];
}
