/**
 * The binding store: Antler's durable memory of chats. It maps conversation keys to agent
 * threads, remembers each thread's unanswered question, and keeps an inbox of received events
 * for dedupe and crash recovery: three concerns (`Bindings`, `PendingQuestions`, `Inbox`), and
 * `BindingStore` is all three for one tenant, with each conversation's own settings
 * (`ConversationSettings`). Each storage kind (src/storage/<kind>/) implements
 * it; `bindingStoreContract` (antler/testing) is the behaviour every implementation must have.
 *
 * Values the caller stores as JSON (refs, handles, payloads) are opaque here: this layer sits
 * below the channels and knows nothing of their types.
 *
 * Tenants: every row belongs to one tenant, and a store reads and writes only its own tenant's
 * rows. The store a caller opens is the default tenant's; `forTenant` gives a view of the same
 * storage for another. Conversation keys, event ids and question ids are unique per tenant, not
 * globally, so a question id or event id taken from another tenant finds nothing here.
 */

export { DEFAULT_TENANT } from "../storage/tenant.js";

import type { Json } from "../storage/json.js";
import type { Outbox } from "./outbox.js";
import type { Schedules } from "./schedules.js";

export type { Json };

/** One agent thread bound to a conversation. */
export interface ThreadBinding {
  key: string;
  threadId: string;
  /** When the binding was made (ms since epoch). */
  createdAt: number;
  /** False for threads replaced by `/new`. */
  current: boolean;
  /** Name of the agent that serves this thread; absent on rows stored before agents had names. */
  agent?: string;
}

/** A question the agent asked that is waiting for the user's answer. */
export interface PendingQuestion {
  threadId: string;
  /** Conversation the question was asked in. */
  key: string;
  /** Short id carried by the question's buttons. */
  questionId: string;
  /** LangGraph interrupt the answer resumes. */
  interruptId: string;
  question: string;
  options: string[];
  kind?: string;
  /** Where it was posted (the channel's message handle), so the answer can be shown on it. */
  posted?: Json;
  /**
   * The user whose message started the run that asked: in a group only they (or an approver)
   * may answer. Absent on questions stored before it was recorded; anyone may answer those.
   */
  askedBy?: { id: string; name?: string };
  /** For a tool approval: its state (requests, decisions so far, deadline), opaque here. */
  approval?: Json;
  createdAt: number;
}

export type InboxState = "received" | "running" | "done" | "failed";

/** One received event. */
export interface InboxEntry {
  channel: string;
  eventId: string;
  key: string;
  state: InboxState;
  /** The message as received, so it can be answered after a restart. */
  payload: Json;
  receivedAt: number;
  updatedAt: number;
  error?: string;
  /** The gateway replica that recorded or last claimed it (stores shared by several replicas). */
  owner?: string;
}

/**
 * Bindings: which agent thread each conversation is on (`/new` starts another, the old ones are
 * kept as history), and the agent a user picked for it with `/agent`.
 */
export interface Bindings {
  /** The current thread of a conversation, if any. */
  currentThread(key: string): Promise<string | undefined>;
  /** The current binding of a conversation (thread and agent), if any. */
  currentBinding(key: string): Promise<ThreadBinding | undefined>;
  /**
   * Makes `threadId` the current thread of `key`, served by `agent`; the previous one is kept as
   * history. Binding a thread again without an agent keeps the agent it had.
   */
  bindThread(key: string, threadId: string, agent?: string): Promise<void>;
  /** Every thread the conversation has had, newest first. */
  threadHistory(key: string): Promise<ThreadBinding[]>;

  /** The agent a user picked for this conversation with `/agent`, if any (kept across `/new` and restarts). */
  chosenAgent(key: string): Promise<string | undefined>;
  /** Sets (or, with undefined, clears) the conversation's picked agent. */
  setChosenAgent(key: string, agent: string | undefined): Promise<void>;
}

/**
 * A conversation's own settings, by name: what a user picked in the chat (`/queue steer`) that
 * outlives the run and the process. Values are plain strings, whose meaning is the caller's; an
 * empty string is a value, and only undefined clears one.
 */
export interface ConversationSettings {
  /** A conversation's own settings, picked in the chat (e.g. `/queue steer`), kept across restarts. */
  conversationSetting(key: string, name: string): Promise<string | undefined>;
  /** Sets (or, with undefined, clears) one of the conversation's settings. */
  setConversationSetting(key: string, name: string, value: string | undefined): Promise<void>;
}

/** Pending questions: at most one unanswered question (or tool approval) per thread. */
export interface PendingQuestions {
  /** Stores (or replaces) the pending question of its thread. */
  setPending(question: PendingQuestion): Promise<void>;
  getPending(threadId: string): Promise<PendingQuestion | undefined>;
  /** Finds a pending question by the id its buttons carry. */
  findPendingByQuestionId(questionId: string): Promise<PendingQuestion | undefined>;
  clearPending(threadId: string): Promise<void>;
  /** Every pending tool approval, oldest first (their deadlines are armed again after a restart). */
  pendingApprovals(): Promise<PendingQuestion[]>;
}

/**
 * The inbox: every received event, recorded before the platform is answered, for dedupe and for
 * finishing what a crash interrupted.
 */
export interface Inbox {
  /** Records a received event. Returns false if the same channel+eventId was already recorded. */
  recordInbound(entry: { channel: string; eventId: string; key: string; payload: Json }): Promise<boolean>;
  setInboxState(channel: string, eventId: string, state: InboxState, error?: string): Promise<void>;
  getInbound(channel: string, eventId: string): Promise<InboxEntry | undefined>;
  /** Events left `received` or `running` (by a crash), oldest first. */
  unfinished(): Promise<InboxEntry[]>;
  /** Deletes finished events received before `before` (ms). Returns how many. */
  pruneInbox(before: number): Promise<number>;
  /**
   * The conversation's most recently recorded event, whatever its state: its payload holds the
   * ref the conversation was last reached by, which a message sent later (an API send, a
   * schedule) posts to.
   */
  lastInbound(key: string): Promise<InboxEntry | undefined>;

  /*
   * Several gateway replicas on one store (PostgreSQL). A store opened for a replica records
   * that replica as the owner of every event it records or claims. A single-process store may
   * leave these out.
   */

  /** The replica this store records as owner; absent on a single-process store. */
  readonly replica?: string;
  /**
   * Claims an event for running: `received` → `running`, owned by this replica, atomically.
   * False when it is no longer `received` (another replica took it), so exactly one runs it.
   */
  claimInbound?(channel: string, eventId: string): Promise<boolean>;
  /**
   * The conversation's oldest event still `received`, in the order the store recorded them, with
   * the events recorded before it that are still `running` (oldest first), so a caller can keep
   * the conversation's order across a replica that died mid-reply. Undefined when none waits.
   */
  nextReceived?(key: string): Promise<{ next: InboxEntry; before: InboxEntry[] } | undefined>;
  /**
   * Moves the unfinished (`received` or `running`) events of `channels` owned by any replica in
   * `from` to this one, atomically: of replicas asking at once, each event goes to exactly one.
   * Returns the moved events, oldest first, with their state unchanged.
   */
  takeOver?(from: string[], channels: string[]): Promise<InboxEntry[]>;
  /** The replicas that own unfinished (`received` or `running`) events, without reading the events. */
  unfinishedOwners?(): Promise<string[]>;
}

/**
 * One tenant's bindings, pending questions, inbox and conversation settings, with its outbox and
 * schedules (outbox.ts, schedules.ts), over storage its views share.
 */
export interface BindingStore extends Bindings, ConversationSettings, PendingQuestions, Inbox, Outbox, Schedules {
  /** The tenant whose rows this store reads and writes. The store a caller opens is the default tenant's. */
  readonly tenant: string;
  /** A view of the same storage limited to `tenant`'s rows; closing a view closes nothing. */
  forTenant(tenant: string): BindingStore;
  /** Closes the storage; on a view from `forTenant` it does nothing. */
  close(): Promise<void>;
}
