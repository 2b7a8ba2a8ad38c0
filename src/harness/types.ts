/**
 * The harness contract: what a chat-facing caller may ask of the agent runtime. Three backends
 * implement it: the embedded agent built from config, a user's own compiled LangGraph graph, and
 * an agent on a LangGraph API server; a class of your own may too (`backend: "module:Export"`).
 * `harnessContract` (src/testing/contract/harness.ts) is the suite every backend passes.
 * Nothing here knows about chats, channels or platforms.
 */
import type { PersonMemory } from "./memory/types.js";

/** Token counts of one run, when the model reports them. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/**
 * One question the agent asked, waiting for an answer: an `ask_clarification` call, or any other
 * LangGraph interrupt (its value's text becomes the question, answered in words).
 */
export interface Clarification {
  /**
   * LangGraph interrupt id; resuming answers exactly this interrupt. Empty for a question that
   * ended the run without an interrupt (a DeerFlow server): its answer is the next user message.
   */
  interruptId: string;
  question: string;
  /** Suggested answers; empty for a free-text question. */
  options: string[];
  /** Kind of question, e.g. `missing_info`, `ambiguous`, `confirm`. Free-form. */
  kind?: string;
  /** Why the agent asks, when it said so. */
  context?: string;
  /**
   * Set when the run paused for tool approval (`agent.approvals`, or any interrupt with the
   * `actionRequests`/`reviewConfigs` shape of langchain's human-in-the-loop middleware). Answer it
   * with an `ApprovalAnswer`: one decision per request, in order. `question` then only summarizes
   * the calls and `options` is empty.
   */
  approval?: { requests: ApprovalRequest[] };
}

/** What a person may decide about a paused tool call. */
export type DecisionType = "approve" | "edit" | "reject";

/** One tool call waiting for a decision. */
export interface ApprovalRequest {
  /** The tool the model called. */
  name: string;
  /** The arguments it called it with. */
  args: Record<string, unknown>;
  /** The middleware's text about the call (by default the tool name and the arguments as JSON). */
  description?: string;
  /** The decisions offered for this call, e.g. `["approve", "reject"]`. */
  allowed: DecisionType[];
  /** JSON schema of the arguments, when the graph sent one; edits are checked against it. */
  argsSchema?: unknown;
}

/**
 * A decision about one tool call. `edit` runs the tool with `args` instead (check them first with
 * `Harness.checkToolArgs`); `reject` does not run it and the model reads `message` (or a default)
 * as its result.
 */
export type Decision =
  | { type: "approve" }
  | { type: "edit"; args: Record<string, unknown> }
  | { type: "reject"; message?: string };

/** The answer to an approval: one decision per `approval.requests` entry, in the same order. */
export interface ApprovalAnswer {
  decisions: Decision[];
}

/**
 * A limit of the agent's that cut a run short: the model asked for tool calls past
 * `max_tool_calls_per_run`, or past `max_tokens_per_run`, and they did not run. The reply may be
 * unfinished; the chat says so after it.
 */
export interface RunLimit {
  kind: "tool_calls" | "tokens";
  /** The limit as configured. */
  max: number;
}

/** What a run streams, in order. A run ends with exactly one `done`, `clarification` or `error`. */
export type RunEvent =
  /** A piece of the assistant's visible reply, to be appended to what came before. */
  | { type: "text"; delta: string }
  /** A tool call started. */
  | { type: "tool_start"; id: string; name: string; args: unknown }
  /** A tool call finished; `error` when it failed (the run goes on). */
  | { type: "tool_end"; id: string; name: string; output: string; error: boolean }
  /**
   * Progress text a tool reports about itself while it runs (LangGraph's `custom` stream: a
   * tool's `config.writer({ progress: "…" })`). `id` is the tool call's id when known.
   */
  | { type: "progress"; text: string; id?: string }
  /** A piece of the model's reasoning (thinking) text. Never reply text. */
  | { type: "reasoning"; delta: string }
  /** The run paused on a question. Answer with `Harness.resume`. */
  | ({ type: "clarification" } & Clarification)
  /** The run finished. `text` is the assistant's whole final reply; `limit` is set when a limit cut it short. */
  | { type: "done"; text: string; usage?: Usage; limit?: RunLimit }
  /** The run failed. `message` is short and fit to show a chat user; the thread stays usable. */
  | { type: "error"; message: string; code: string };

/** An image of the user's message, base64-encoded. */
export interface RunImage {
  mime: string;
  base64: string;
}

/** Who is talking, for dynamic context, memory and tracing. */
export interface RunUser {
  /** The person's id on the platform (a Telegram user id, a Slack member id, a Feishu open_id). */
  id: string;
  name?: string;
  /**
   * Antler's stable id for the person: the platform id scoped by tenant and channel, in the
   * characters a DeerFlow server accepts as a user id (`[A-Za-z0-9_-]`). Memory is kept under it
   * and a remote run sends it as `context.user_id`. Absent when no person is behind the turn.
   */
  personId?: string;
  /** The channel instance the person wrote in (a remote run's `context.channel_name`). */
  channel?: string;
  /** `dm` or `group`: where the person wrote (a remote run's `context.chat_type`). */
  chatType?: string;
}

/**
 * The chat conversation a run serves, for tools that act on it (the schedule tools): an embedded
 * run puts it in its `configurable` under {@link CONVERSATION_CONFIG_KEY}.
 */
export interface RunConversation {
  tenant: string;
  /** Channel instance name. */
  channel: string;
  /** Conversation key. */
  key: string;
  /** The person behind the turn, when a person is. */
  user?: RunUser;
}

/** Where an embedded run's `configurable` carries its {@link RunConversation}. */
export const CONVERSATION_CONFIG_KEY = "antler_conversation";

export interface RunOptions {
  /**
   * Aborting it cancels the run (same as `Harness.cancel`). Abort with a reason named
   * `TimeoutError` (e.g. `AbortSignal.timeout`) and the run ends with code `timeout`. Abort
   * with a reason named `DetachError` when the gateway is going away: a backend whose runs
   * outlive the gateway leaves the run going (see `reattach`) and ends with code `detached`;
   * the others cancel it.
   */
  signal?: AbortSignal;
  /** The person behind this turn. */
  user?: RunUser;
  /** The chat conversation this turn serves (see {@link RunConversation}). */
  conversation?: RunConversation;
  /** Images sent with the message, for a model that reads them: they go in as image blocks after the text. */
  images?: RunImage[];
  /** Free-form labels passed to middleware as run context (e.g. `{ channel: "slack" }`). */
  context?: Record<string, string>;
  /**
   * Where the thread lives in the chat (channel, conversation key, chat id). A backend that keeps
   * threads elsewhere stores them with the thread, so an operator can find it there.
   */
  origin?: Record<string, string>;
  /**
   * For `resume`: the question being answered (its `interruptId`). Matters when several are
   * open; without it the first open one is answered.
   */
  interruptId?: string;
  /**
   * The reply of this thread's previous run as far as it got before a new message interrupted
   * it (follow-up mode `interrupt`). The backend puts it into the thread as an assistant message
   * marked as cut off, before the new user message, so the model sees what the user saw.
   */
  interrupted?: string;
  /**
   * Messages may be steered into this run (`Harness.steer`; follow-up mode `steer`). A backend
   * whose steering costs something on every step (the embedded and graph backends watch each
   * step for the end of a tools step) leaves it off without this; a message steered into such a
   * run is `missed`. The core sets it when the conversation's follow-up mode is `steer`.
   */
  steerable?: boolean;
  /**
   * A stable id of the message behind this run (e.g. `slack:Ev0123`). A backend whose runs
   * outlive the gateway records it with the run, so `reattach` can find the run again.
   */
  tag?: string;
}

/** Which agent the harness drives and whether it can be reached, for status pages and doctor. */
export interface AgentStatus {
  backend: "embedded" | "graph" | "remote";
  /** What it points at: the model, the graph's `"module:Export"`, or the server URL and assistant. */
  target: string;
  /** False when the last check or the last run could not reach the agent. */
  reachable: boolean;
  /** The newest failure to reach or run the agent, if any. */
  last_error: { message: string; at: string } | null;
}

/** What the harness knows about one thread. */
export interface ThreadInfo {
  threadId: string;
  /** Set by the title middleware after the first turn. */
  title?: string;
  /** The unanswered question, if the last run paused. */
  pending?: Clarification;
  /** Number of messages in the thread's history. */
  messageCount: number;
  /** Name of the model that serves this thread. */
  model: string;
  /** True while a run is active on the thread. */
  running: boolean;
}

/** One message of a thread's history, as a person reads it again (see `Harness.history`). */
export interface HistoryEntry {
  /** The message's id in the thread, stable across reads. */
  id: string;
  role: "user" | "assistant";
  /** Markdown as written; a user's files are listed by name. */
  text: string;
}

/** The agent runtime. One active run per thread at a time. */
export interface Harness {
  /** Starts a run with a new user message. */
  run(threadId: string, text: string, options?: RunOptions): AsyncIterable<RunEvent>;
  /**
   * Answers the pending question of a paused thread and continues the run. A text answers a
   * question; an `ApprovalAnswer` answers an approval (`Clarification.approval`). A text given to
   * an approval rejects every call with that text as the message the model reads. A malformed
   * `ApprovalAnswer` (wrong count, a decision not allowed) ends with an `approval_invalid` error
   * and leaves the approval pending.
   */
  resume(threadId: string, answer: string | ApprovalAnswer, options?: RunOptions): AsyncIterable<RunEvent>;
  /**
   * Checks edited arguments before they go into an `edit` decision: undefined when valid, else a
   * short sentence fit for a chat user naming what is wrong. Checked against the tool's own
   * schema when the backend has the tool (embedded), else against `request.argsSchema`; with
   * neither, anything is accepted.
   */
  checkToolArgs?(request: ApprovalRequest, args: unknown): Promise<string | undefined>;
  /**
   * Closes the thread's open question without running the agent (`/stop` while tool calls wait
   * for approval): each paused tool call gets `reason` (default: the user stopped it) as its
   * result, which is what the model reads on the thread's next run, and that run starts fresh.
   * Resolves false when nothing was open. Without it, the next run closes the question as
   * unanswered.
   */
  closePending?(threadId: string, reason?: string): Promise<boolean>;
  /**
   * Adds a user message to the thread's active run (follow-up mode `steer`): the model reads it
   * in its next call, after the tool calls already running finish. Resolves `taken` once the run
   * took it in (its reply then answers it too), `missed` when no run is active or the run ended
   * before another model call; the caller then runs it as a turn of its own. Messages steered
   * into one run are taken in the order they were given. Without it, steering falls back to queueing.
   * `options.id` is the id the message takes in the thread (so a caller can find it in
   * `history` after a crash); a new one when absent.
   */
  steer?(threadId: string, text: string, options?: { id?: string }): Promise<"taken" | "missed">;
  /** Cancels the active run of a thread. Returns false when none is running. */
  cancel(threadId: string): boolean;
  /** What the thread looks like now, or undefined for a thread never run. */
  getThread(threadId: string): Promise<ThreadInfo | undefined>;
  /**
   * The thread's conversation so far, read from its checkpoint: the user's messages and the
   * agent's replies, oldest first (tool calls left out; an answered question shows its answer).
   * Empty for a thread never run.
   */
  history?(threadId: string): Promise<HistoryEntry[]>;
  /**
   * After a restart: the run a previous process started for the message tagged `tag` on this
   * thread, when the backend kept it going (a LangGraph server does). Streams the rest of it, or
   * its result if it already ended. Undefined when no such run exists; the caller then handles
   * the message as lost. Backends whose runs die with the process leave this out.
   */
  reattach?(threadId: string, tag: string, options?: RunOptions): Promise<AsyncIterable<RunEvent> | undefined>;
  /** Backend, target and reachability. `probe` checks reachability now instead of reporting the last seen. */
  status?(probe?: boolean): Promise<AgentStatus>;
  /**
   * The people's remembered facts, when this agent remembers people (`features.memory`): what
   * `/memory` lists and forgets. Absent when it does not.
   */
  readonly memory?: PersonMemory | undefined;
  /** Releases checkpointer and model clients. */
  close(): Promise<void>;
}

/** The methods a `Harness` must have; a backend of your own (`backend: "module:Export"`) is checked for them. */
export const REQUIRED_HARNESS_METHODS = ["run", "resume", "cancel", "getThread", "close"] as const;
