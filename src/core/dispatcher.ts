/**
 * The dispatcher: every inbound message from every channel passes through here, in the order of
 * a message's path end to end — record (dedupe) → access → commands → question
 * routing → per-conversation FIFO → run → render. Every accepted message ends in a reply or an
 * explicit notice, also across a crash (see `recover`).
 */
import { randomBytes } from "node:crypto";
import type { BindingStore, InboxEntry, Json, PendingQuestion } from "../bindings/types.js";
import { accessDenial } from "../channels/kit/access.js";
import type { ChannelSlot } from "../channels/registry.js";
import type {
  Channel,
  ConversationHistory,
  ConversationRef,
  InboundMessage,
  InboundSink,
  MessageHandle,
} from "../channels/types.js";
import { DEFAULT_AGENT } from "../config/agents.js";
import type { GatewayConfig } from "../config/schema.js";
import { AntlerError, errorMessage } from "../errors.js";
import { toRunError } from "../harness/run-errors.js";
import type { ApprovalAnswer, RunEvent, RunImage, RunOptions } from "../harness/types.js";
import type { Logger } from "../log/logger.js";
import type { MediaDesk } from "../media/desk.js";
import type { Router } from "../routing/index.js";
import { acknowledgeClick, mayAnswer, refuseAnswer, tellPrivately } from "./answer-rights.js";
import { type Answer, answerFromButton, answerFromText } from "./answers.js";
import { ApprovalDesk } from "./approval-desk.js";
import { approvalOf } from "./approvals.js";
import { type CommandName, HELP_TEXT, IMMEDIATE, parseCommand } from "./commands.js";
import { type AgentSource, Conversations } from "./conversations.js";
import { closeDropped, DROPPED_NOTICES, tellDropped } from "./dropped-questions.js";
import { conversationHistory } from "./history.js";
import { nextInOrder } from "./in-order.js";
import { KeyedQueue, Semaphore } from "./queue.js";
import { closeQuestion, type RenderHooks, type RenderOutcome, renderRun, sendNotice } from "./render/index.js";
import { TypingLoop } from "./render/typing.js";
import { untilAbandoned } from "./run-guard.js";
import { RunSlot } from "./slot-guard.js";

/** Optional observer for metrics; every method is a notification only. */
export interface DispatcherObserver {
  inbound?(channel: string): void;
  runStarted?(channel: string): void;
  runFinished?(channel: string, outcome: RenderOutcome["kind"], seconds: number): void;
  firstVisible?(channel: string, seconds: number): void;
  rateLimited?(channel: string): void;
  /** A platform API call succeeded (`send`, `edit`, `stream`). */
  apiCall?(channel: string, kind: string): void;
  /** A platform API call failed; `code` is the error's code (e.g. `rate_limited`, `not_found`). */
  apiError?(channel: string, code: string): void;
}

export interface DispatcherOptions {
  /** The store; each channel reads and writes through the view of its tenant's rows. */
  store: BindingStore;
  agents: AgentSource;
  /** Picks the tenant and agent of a chat. */
  router: Router;
  logger: Logger;
  settings: GatewayConfig;
  observer?: DispatcherObserver;
  /** Takes attachments in and posts the agent's files out; without it, messages are text only. */
  media?: MediaDesk;
  /**
   * Set when several gateway replicas share the store (PostgreSQL): conversations are then run
   * under a lease that only one replica holds at a time, in the order the store recorded their
   * messages, whichever replica received them.
   */
  replicas?: ReplicaCoordinator;
}

/** What the dispatcher needs from the replica coordination (src/replicas). */
export interface ReplicaCoordinator {
  /** Runs `work` while this replica holds the conversation's lease, waiting while another holds it. */
  withConversation<T>(tenant: string, key: string, work: (lost: AbortSignal) => Promise<T>): Promise<T>;
  /** Whether another live replica holds the conversation's lease now (it is running a message there). */
  heldElsewhere(tenant: string, key: string): Promise<boolean>;
  /** Asks every other replica to stop the conversation's running reply. */
  stopElsewhere(tenant: string, key: string): Promise<void>;
}

/** What to do with a message, decided the same way on every replica. */
type Verdict =
  | { kind: "ignore"; denial: "user" | "chat" | "mention" }
  | { kind: "immediate"; command: CommandName }
  | { kind: "queue" };

export const NOTICES = {
  busy: "I'm still working through your earlier messages, so I couldn't take this one. Please send it again in a moment.",
  restarted: "I was restarted while answering this — please send it again.",
  tooOld: "I was restarted before I got to this message, and it is too old to answer now — please send it again.",
  notAllowed: "Sorry, you're not allowed to use this bot.",
  nonText: "I can only read text messages for now.",
  staleQuestion: "That question is no longer open.",
  nothingToStop: "Nothing is running right now.",
  newThread: "Started a new conversation. What would you like to talk about?",
  failed: "Something went wrong while handling your message. Please try again.",
  noReply: "I finished without writing a reply. Please try again, or ask differently.",
} as const;

/**
 * A message the stopping gateway leaves to the next process, with the inbox state that says how:
 * `received` (never started: it is run again) or `running` (its run goes on on the backend and
 * is rejoined).
 */
class LeftForNextProcess extends Error {
  constructor(readonly state: "received" | "running") {
    super(`left to the next process (${state})`);
  }
}

/** The tag a run carries so a restarted gateway can find the run of a message again. */
function runTag(slot: ChannelSlot, msg: InboundMessage): string {
  return `${slot.name}:${msg.eventId}`;
}

export class Dispatcher {
  private readonly queue: KeyedQueue;
  private readonly runs: Semaphore;
  /** The stop switch of each conversation's message in progress, from before its run, so /stop reaches it early. */
  private readonly active = new Map<string, AbortController>();
  /** When each of those was registered (this process's clock). */
  private readonly claimedAt = new WeakMap<AbortController, number>();
  private accepting = true;
  private readonly background = new Set<Promise<void>>();
  private readonly conversations: Conversations;
  private readonly desk: ApprovalDesk;

  constructor(private readonly options: DispatcherOptions) {
    this.queue = new KeyedQueue(options.settings.queue_size, (err) => options.logger.error({ err }, "queued job failed"));
    this.runs = new Semaphore(options.settings.max_concurrent_runs);
    this.conversations = new Conversations(options);
    this.desk = new ApprovalDesk({
      conversations: this.conversations,
      logger: options.logger,
      channelOf: (slot) => this.channelOf(slot),
      hooks: (slot) => this.hooks(slot),
      notify: (slot, ref, text) => this.notify(slot, ref, text),
      refuse: (slot, msg, pending) => this.refuse(slot, msg, pending),
      resume: (slot, msg, pending, answer) => this.resumeWith(slot, msg, pending, answer),
      enqueue: (key, work) => this.queue.push(key, work),
      policy: (slot, agent, tool) => options.agents.approvalPolicy?.(this.conversations.scopeOf(slot.name).tenant, agent, tool),
    });
  }

  /** Runs in progress across all conversations (not counting those waiting for a slot). */
  get activeRuns(): number {
    return this.runs.inUse;
  }

  /** Messages waiting in conversation queues. */
  get queueDepth(): number {
    return this.queue.depth;
  }

  /** The sink a channel delivers into. Resolves once the message is durably recorded and queued. */
  sinkFor(slot: ChannelSlot): InboundSink {
    return (msg) => this.receive(slot, msg);
  }

  /** A conversation of `slot` read back: its thread's history and what waits for a click (a web page's reload). */
  history(slot: ChannelSlot, key: string): Promise<ConversationHistory> {
    return conversationHistory(this.conversations, slot.name, this.channelOf(slot), key);
  }

  /** Resolves when every queued and running message, command and notice is finished. */
  async idle(): Promise<void> {
    for (;;) {
      await this.queue.whenIdle();
      if (this.background.size === 0 && this.queue.depth === 0) return;
      await Promise.allSettled([...this.background]);
    }
  }

  /** Work outside the conversation queues (commands that answer at once, notices), so `idle` can wait for it. */
  private inBackground(work: Promise<void>): void {
    const tracked = work.catch((err: unknown) => this.options.logger.error({ err }, "background work failed"));
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }

  /**
   * Shutdown, first step: refuses new messages (not acked, so the platform delivers them again to
   * the next process) and starts no new run. Messages already accepted but not started stay in
   * the inbox, and the next process runs them (see `recover`). Running replies go on.
   */
  stopAccepting(): void {
    this.accepting = false;
    this.desk.close();
  }

  /**
   * Another replica asked to stop a conversation's reply (its `/stop`, made `madeMsAgo` ago):
   * stops it if it runs here and began before the request, never a later reply.
   */
  stopConversation(key: string, madeMsAgo = 0): boolean {
    const run = this.active.get(key);
    if (!run || Date.now() - (this.claimedAt.get(run) ?? 0) < madeMsAgo) return false;
    run.abort();
    return true;
  }

  /** After a channel (re)started: tool approvals waiting in its chats get their deadlines again. */
  async armApprovals(slot: ChannelSlot): Promise<void> {
    await this.desk.resumeDeadlines(slot);
  }

  /**
   * Shutdown, after the drain: stops every running reply. A backend whose runs outlive the
   * gateway leaves them going (the next process rejoins them); a local run is cut off, and its
   * user is told the gateway is restarting.
   */
  cancelAll(): void {
    this.accepting = false;
    const reason = new DOMException("the gateway is shutting down", "DetachError");
    for (const controller of this.active.values()) controller.abort(reason);
  }

  private async receive(slot: ChannelSlot, msg: InboundMessage): Promise<void> {
    if (msg.fromBot) return;
    if (!this.accepting) throw new AntlerError("shutting_down", "the gateway is shutting down; deliver this again later");
    const { logger } = this.options;
    const { store } = this.conversations.scopeOf(slot.name);
    const fresh = await store.recordInbound({
      channel: slot.name,
      eventId: msg.eventId,
      key: msg.ref.key,
      payload: msg as unknown as Json,
    });
    if (!fresh) {
      logger.debug({ channel: slot.name, eventId: msg.eventId }, "duplicate event dropped");
      return;
    }
    slot.counters.inbound++;
    slot.lastInboundAt = Date.now();
    this.options.observer?.inbound?.(slot.name);
    try {
      await this.route(slot, msg);
    } catch (err) {
      // Recorded means a redelivery would be dropped as a duplicate: answer it here instead.
      logger.error({ err, channel: slot.name, eventId: msg.eventId }, "could not route a recorded message");
      slot.noteError(err);
      await store.setInboxState(slot.name, msg.eventId, "failed", errorMessage(err)).catch(() => undefined);
      await this.notify(slot, msg.ref, NOTICES.failed);
    }
  }

  /** Access, commands that answer at once, then the conversation's queue. */
  private async route(slot: ChannelSlot, msg: InboundMessage): Promise<void> {
    const { store } = this.conversations.scopeOf(slot.name);
    const verdict = await this.verdict(slot, msg);
    if (verdict.kind === "ignore") return this.ignore(slot, msg, verdict.denial);
    if (verdict.kind === "immediate") {
      this.inBackground(this.track(slot, msg, () => this.command(slot, msg, verdict.command)));
      return;
    }
    const key = msg.ref.key;
    const job = this.options.replicas ? () => this.drain(slot, key) : () => this.track(slot, msg, () => this.handle(slot, msg));
    if (!this.queue.push(key, job)) {
      if (!(await this.take(slot, msg))) return;
      await store.setInboxState(slot.name, msg.eventId, "failed", "conversation queue full");
      this.inBackground(this.notify(slot, msg.ref, NOTICES.busy));
    }
  }

  /** Whether the message is for the bot, and whether it answers at once or waits its turn. */
  private async verdict(slot: ChannelSlot, msg: InboundMessage): Promise<Verdict> {
    const { store } = this.conversations.scopeOf(slot.name);
    let denial = accessDenial(slot.access, msg);
    // A follow-up in a thread the bot is already part of needs no new mention, even after a restart.
    if (denial === "mention" && msg.inThread && (await store.currentThread(msg.ref.key))) denial = undefined;
    if (denial) return { kind: "ignore", denial };
    const command = msg.action ? undefined : parseCommand(msg.text);
    if (command && IMMEDIATE.has(command)) return { kind: "immediate", command };
    return { kind: "queue" };
  }

  private async ignore(slot: ChannelSlot, msg: InboundMessage, denial: "user" | "chat" | "mention"): Promise<void> {
    const { store } = this.conversations.scopeOf(slot.name);
    this.options.logger.debug({ channel: slot.name, key: msg.ref.key, denial }, "message not for the bot");
    if (!(await this.take(slot, msg))) return;
    await store.setInboxState(slot.name, msg.eventId, "done", `ignored: ${denial}`);
    if (denial === "user" && msg.ref.chatType === "direct") this.inBackground(this.notify(slot, msg.ref, NOTICES.notAllowed));
  }

  /**
   * Takes a recorded message for handling: with one process it is ours already; with several
   * replicas it is ours only if no other replica took it first (false: leave it alone).
   */
  private async take(slot: ChannelSlot, msg: InboundMessage): Promise<boolean> {
    const { store } = this.conversations.scopeOf(slot.name);
    if (!this.shared(store)) return true;
    return store.claimInbound!(slot.name, msg.eventId);
  }

  /** Several replicas share the store: a message is ours only once claimed (which also marks it running). */
  private shared(store: BindingStore): boolean {
    return this.options.replicas !== undefined && store.claimInbound !== undefined;
  }

  /**
   * With several replicas: under the conversation's lease, runs its waiting messages in the
   * order they were recorded, also those another replica received (its own job then finds
   * nothing left). A drain that fails is tried again, so no recorded message is left waiting.
   */
  private async drain(slot: ChannelSlot, key: string, attempt = 0): Promise<void> {
    const { store, tenant } = this.conversations.scopeOf(slot.name);
    const replicas = this.options.replicas;
    if (!replicas || !store.nextReceived || !this.accepting) return;
    const { logger, settings } = this.options;
    try {
      const leaseLost = await replicas.withConversation(tenant, key, async (lost) => {
        // A lease that lapsed (the database was unreachable) or was taken: start nothing new here.
        const going = () => this.accepting && !lost.aborted;
        // A message still running before the next (its replica died mid-reply) is answered first.
        const holdMs = settings.run_timeout_ms + settings.delivery_retry_ms;
        const next = () => (going() ? nextInOrder(store, key, { going, holdMs, logger }) : undefined);
        for (let entry = await next(); entry; entry = await next()) {
          const msg = entry.payload as unknown as InboundMessage;
          const verdict = await this.verdict(slot, msg);
          if (verdict.kind === "ignore") await this.ignore(slot, msg, verdict.denial);
          else if (verdict.kind === "immediate") await this.track(slot, msg, () => this.command(slot, msg, verdict.command));
          else await this.track(slot, msg, () => this.handle(slot, msg));
        }
        return lost.aborted;
      });
      // What is left waits for whoever holds the lease now, or for this replica once it has it again.
      if (leaseLost) throw new AntlerError("lease_lost", "the conversation's lease lapsed while its messages ran");
    } catch (err) {
      logger.error({ err, channel: slot.name, key, attempt }, "could not run a conversation's messages; trying again");
      await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 500 * 2 ** attempt)));
      if (this.accepting) this.inBackground(this.drain(slot, key, attempt + 1));
    }
  }

  /**
   * Marks the inbox entry running → done/failed around `work`; a failure gets a notice in the chat.
   * `taken`: the entry is this replica's already (taken over while running), so it is not claimed.
   */
  private async track(slot: ChannelSlot, msg: InboundMessage, work: () => Promise<void>, taken = false): Promise<void> {
    const { logger } = this.options;
    const { store } = this.conversations.scopeOf(slot.name);
    // Stopping: a message not started yet stays `received` for the next process.
    if (!this.accepting) return;
    // Another replica took it first (it received it too late, or took it over): theirs to answer.
    if (!taken && !(await this.take(slot, msg))) return;
    if (!this.shared(store)) await store.setInboxState(slot.name, msg.eventId, "running");
    try {
      await work();
      await store.setInboxState(slot.name, msg.eventId, "done");
    } catch (err) {
      if (err instanceof LeftForNextProcess) {
        if (err.state === "received") await store.setInboxState(slot.name, msg.eventId, "received");
        logger.info({ channel: slot.name, eventId: msg.eventId, state: err.state }, "left to the next process");
        return;
      }
      logger.error({ err, channel: slot.name, key: msg.ref.key }, "message handling failed");
      slot.noteError(err);
      await store.setInboxState(slot.name, msg.eventId, "failed", errorMessage(err));
      await this.notify(slot, msg.ref, NOTICES.failed);
    }
  }

  private async handle(slot: ChannelSlot, msg: InboundMessage): Promise<void> {
    if (msg.action) return this.answerClick(slot, msg);
    const command = parseCommand(msg.text);
    if (command === "new") return this.startNewThread(slot, msg);
    if (command === "agent") return this.notify(slot, msg.ref, await this.conversations.agentCommand(slot.name, msg));
    const withFiles = (msg.attachments?.length ?? 0) > 0 && this.options.media !== undefined;
    if (msg.text.trim() === "" && !withFiles) return void (await this.notify(slot, msg.ref, NOTICES.nonText));
    const controller = this.claim(msg.ref.key);
    try {
      const target = await this.conversations.threadFor(slot.name, msg);
      if (target.dropped) await this.tellDropped(slot, msg, target.dropped);
      const pending = await this.conversations.scopeOf(slot.name).store.getPending(target.threadId);
      if (pending && approvalOf(pending)) return await this.desk.text(slot, msg, pending);
      if (pending && !mayAnswer(slot.access, pending, msg)) {
        // In a shared group thread, someone else's message must neither answer nor abandon the question.
        return await this.refuse(slot, msg, pending);
      }
      const { threadId, harness } = target;
      let text = msg.text;
      let images: RunImage[] | undefined;
      if (withFiles && this.options.media) {
        const channel = this.channelOf(slot);
        const intake = await this.options.media.intake(channel, msg, threadId, target.agent, controller.signal);
        // `/stop` (or the shutdown) during a download: say so, as a stopped run does.
        if (controller.signal.aborted) return await this.stopped(slot, msg, controller.signal);
        for (const notice of intake.notices) await this.notify(slot, msg.ref, notice);
        if (intake.text.trim() === "" && intake.images.length === 0) return;
        text = intake.text;
        if (intake.images.length > 0) images = intake.images;
      }
      if (pending) return await this.resume(slot, msg, pending, answerFromText(pending, text), controller);
      await this.execute(
        slot,
        msg,
        threadId,
        (opts) => harness.run(threadId, text, images ? { ...opts, images } : opts),
        controller,
      );
    } finally {
      this.release(msg.ref.key, controller);
    }
  }

  /** A message stopped before its run started: left to the next process when stopping, else the stopped notice. */
  private stopped(slot: ChannelSlot, msg: InboundMessage, signal: AbortSignal): Promise<void> {
    if (!this.accepting) throw new LeftForNextProcess("received");
    return this.notify(slot, msg.ref, `⚠️ ${toRunError(undefined, true, signal.reason).message}`);
  }

  /** Registers the conversation's message in progress, so /stop can reach it from now on. */
  private claim(key: string): AbortController {
    const controller = new AbortController();
    this.active.set(key, controller);
    this.claimedAt.set(controller, Date.now());
    return controller;
  }

  private release(key: string, controller: AbortController): void {
    if (this.active.get(key) === controller) this.active.delete(key);
  }

  /**
   * Resolves once nothing of the channel's conversations runs or waits here: no reply, and no
   * queued message that would still answer through the channel. Checked every 100 ms: it serves a
   * channel being retired, which is rare, and the queue has no event per conversation.
   */
  async settledOn(channel: string): Promise<void> {
    const ours = (key: string) => key.startsWith(`${channel}:`);
    while (this.queue.keys().some(ours) || [...this.active.keys()].some(ours)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private async answerClick(slot: ChannelSlot, msg: InboundMessage): Promise<void> {
    const action = msg.action!;
    // Looked up among this tenant's questions only: a forged id of another tenant's finds nothing.
    const found = await this.conversations.scopeOf(slot.name).store.findPendingByQuestionId(action.questionId);
    const pending = found?.key === msg.ref.key ? found : undefined;
    if (pending && approvalOf(pending) && (await this.conversations.servesThread(slot.name, pending.key, pending.threadId))) {
      return this.desk.click(slot, msg, pending);
    }
    const answer = pending ? answerFromButton(pending, action.buttonId) : undefined;
    if (pending && answer && !mayAnswer(slot.access, pending, msg)) return this.refuse(slot, msg, pending);
    // A question of an agent the config no longer has cannot be resumed.
    const gone = pending && !(await this.conversations.servesThread(slot.name, pending.key, pending.threadId));
    if (pending && gone) await this.conversations.scopeOf(slot.name).store.clearPending(pending.threadId);
    if (gone) await closeDropped(this.channelOf(slot), pending, this.hooks(slot), this.options.logger);
    if (!pending || !answer || gone) {
      const { logger } = this.options;
      const text = gone ? DROPPED_NOTICES.click : NOTICES.staleQuestion;
      if (await tellPrivately(this.channelOf(slot), msg, text, logger)) return;
      return void (await this.notify(slot, msg.ref, text));
    }
    await acknowledgeClick(this.channelOf(slot), msg, this.options.logger);
    await this.resume(slot, msg, pending, answer);
  }

  /** The routes moved the conversation off a thread with an open question: the user hears it once. */
  private async tellDropped(slot: ChannelSlot, msg: InboundMessage, pending: PendingQuestion): Promise<void> {
    const notify = (text: string) => this.notify(slot, msg.ref, text);
    await tellDropped(this.channelOf(slot), pending, notify, this.hooks(slot), this.options.logger);
  }

  /** Not the asker nor an approver: the question stays open, its buttons too, and the sender is told. */
  private async refuse(slot: ChannelSlot, msg: InboundMessage, pending: PendingQuestion): Promise<void> {
    const notify = (text: string) => this.notify(slot, msg.ref, text);
    await refuseAnswer(this.channelOf(slot), msg, pending, notify, this.options.logger);
  }

  private async resume(
    slot: ChannelSlot,
    msg: InboundMessage,
    pending: PendingQuestion,
    answer: Answer,
    controller?: AbortController,
  ): Promise<void> {
    const { store } = this.conversations.scopeOf(slot.name);
    await store.clearPending(pending.threadId);
    const channel = this.channelOf(slot);
    if (pending.posted) {
      await closeQuestion(
        channel,
        pending.posted as unknown as MessageHandle,
        pending.question,
        answer.value,
        this.hooks(slot),
      ).catch((err: unknown) => this.options.logger.warn({ err, channel: slot.name }, "could not mark the question answered"));
    }
    await this.resumeWith(slot, msg, pending, answer.value, controller);
  }

  /** Resumes the run paused on `pending` with an answer or an approval's decisions. */
  private async resumeWith(
    slot: ChannelSlot,
    msg: InboundMessage,
    pending: PendingQuestion,
    answer: string | ApprovalAnswer,
    controller?: AbortController,
  ): Promise<void> {
    const harness = await this.conversations.harnessOfThread(slot.name, pending.key, pending.threadId);
    const resume = (opts: RunOptions) => harness.resume(pending.threadId, answer, { ...opts, interruptId: pending.interruptId });
    // The run still belongs to who asked, also when an approver answered: a follow-up question is theirs too.
    await this.execute(slot, msg, pending.threadId, resume, controller, pending.askedBy ?? msg.user);
  }

  /** One run: global limit, render, then store what the run left behind (a new question). */
  private async execute(
    slot: ChannelSlot,
    msg: InboundMessage,
    threadId: string,
    start: (opts: RunOptions) => AsyncIterable<RunEvent>,
    claimed?: AbortController,
    asker: { id: string; name?: string } = msg.user,
  ): Promise<void> {
    const key = msg.ref.key;
    // Registered before waiting for a run slot, so /stop reaches a message that waits for one.
    const controller = claimed ?? this.claim(key);
    // Counted from now, so a message waiting for a run slot shows the indicator as well.
    const typing = new TypingLoop(this.channelOf(slot), msg.ref, this.options.logger);
    typing.start(this.options.settings.typing_delay_ms);
    const release = await this.runs.acquire();
    if (!this.accepting || controller.signal.aborted) {
      release();
      void typing.stop();
      this.release(key, controller);
      return this.stopped(slot, msg, controller.signal);
    }
    const runSlot = new RunSlot(this.runs, release, this.options.settings.stall_release_ms);
    const timer = setTimeout(
      () => controller.abort(new DOMException("the run took too long", "TimeoutError")),
      this.options.settings.run_timeout_ms,
    );
    const started = Date.now();
    slot.counters.runs++;
    this.options.observer?.runStarted?.(slot.name);
    const questionId = randomBytes(6).toString("base64url");
    let outcome: RenderOutcome | undefined;
    try {
      // The run slot covers the agent's run only (and not while its stream stalls): pacing the last edits must not hold it.
      const events = runSlot.guard(
        untilAbandoned(
          start({
            signal: controller.signal,
            user: msg.user,
            context: { channel: slot.name, chat_type: msg.ref.chatType, tenant: this.conversations.scopeOf(slot.name).tenant },
            origin: {
              channel: slot.name,
              conversation: key,
              chat: msg.ref.chatId,
              tenant: this.conversations.scopeOf(slot.name).tenant,
            },
            tag: runTag(slot, msg),
          }),
          controller.signal,
          (err) => this.options.logger.warn({ err, channel: slot.name, key }, "a run ignored its abort; abandoned it"),
        ),
      );
      const hooks = this.hooks(slot, started);
      outcome = await renderRun(events, {
        channel: this.channelOf(slot),
        ref: msg.ref,
        logger: this.options.logger,
        hooks,
        questionId,
        callTimeoutMs: this.options.settings.platform_call_timeout_ms,
        retryBudgetMs: this.options.settings.delivery_retry_ms,
        typing,
      });
    } finally {
      void typing.stop();
      clearTimeout(timer);
      this.release(key, controller);
      runSlot.free();
      this.options.observer?.runFinished?.(slot.name, outcome?.kind ?? "error", (Date.now() - started) / 1000);
    }
    // Left running for the next process: the inbox entry must stay unfinished.
    if (outcome.kind === "error" && outcome.code === "detached") throw new LeftForNextProcess("running");
    if (this.options.media && (outcome.kind === "done" || outcome.kind === "clarification")) {
      for (const notice of await this.options.media.deliver(this.channelOf(slot), msg.ref, threadId, (err) =>
        slot.noteError(err),
      )) {
        await this.notify(slot, msg.ref, notice);
      }
    }
    if (outcome.kind === "done") {
      slot.counters.replies++;
      // A run of only tool calls (or blank text) posts nothing; silence would look like a lost message.
      if (outcome.messages.length === 0) await this.notify(slot, msg.ref, NOTICES.noReply);
    }
    if (outcome.kind === "clarification") {
      const c = outcome.clarification;
      const pending: PendingQuestion = {
        threadId,
        key,
        questionId,
        interruptId: c.interruptId,
        question: c.question,
        options: c.options,
        ...(c.kind ? { kind: c.kind } : {}),
        posted: outcome.question as unknown as Json,
        askedBy: { id: asker.id, ...(asker.name ? { name: asker.name } : {}) },
        createdAt: Date.now(),
      };
      if (c.approval) await this.desk.open(slot, msg.ref, pending, c.approval.requests);
      else await this.conversations.scopeOf(slot.name).store.setPending(pending);
    }
  }

  private async command(slot: ChannelSlot, msg: InboundMessage, command: CommandName): Promise<void> {
    const key = msg.ref.key;
    if (command === "help") return void (await this.notify(slot, msg.ref, HELP_TEXT));
    if (command === "stop") {
      const run = this.active.get(key);
      // The stopped run posts its own "stopped" notice; say something only when there was nothing to stop.
      if (run) return run.abort();
      const replicas = this.options.replicas;
      const { tenant } = this.conversations.scopeOf(slot.name);
      // Another replica is answering in this conversation: it stops and says so.
      if (replicas && (await replicas.heldElsewhere(tenant, key))) return replicas.stopElsewhere(tenant, key);
      if (!(await this.desk.stop(slot, key, msg.user.name ?? msg.user.id)))
        await this.notify(slot, msg.ref, NOTICES.nothingToStop);
      return;
    }
    await this.notify(slot, msg.ref, await this.statusText(slot, key));
  }

  private async statusText(slot: ChannelSlot, key: string): Promise<string> {
    const { store } = this.conversations.scopeOf(slot.name);
    const binding = await store.currentBinding(key);
    if (!binding) return "No conversation yet: send a message to start one.";
    const { threadId } = binding;
    const agent = binding.agent ?? DEFAULT_AGENT;
    if (!this.conversations.serves(slot.name, agent)) {
      return [`Thread: ${threadId}`, `Agent: ${agent} (no longer configured: your next message starts a new thread)`].join("\n");
    }
    const info = await (await this.conversations.harness(slot.name, agent)).getThread(threadId);
    const pending = await store.getPending(threadId);
    const lines = [
      `Thread: ${threadId}`,
      `Agent: ${agent}`,
      `Title: ${info?.title ?? "(none yet)"}`,
      `Model: ${info?.model ?? "(unknown)"}`,
      `Replying now: ${this.active.has(key) ? "yes" : "no"}`,
      `Messages: ${info?.messageCount ?? 0}`,
    ];
    if (pending) lines.push(`Waiting for your answer to: ${pending.question}`);
    return lines.join("\n");
  }

  /** `/new`: a fresh thread with the agent this chat uses now. */
  private async startNewThread(slot: ChannelSlot, msg: InboundMessage): Promise<void> {
    const agent = await this.conversations.agentFor(slot.name, msg);
    await this.conversations.bindNewThread(slot.name, msg.ref.key, agent);
    await this.notify(slot, msg.ref, NOTICES.newThread);
  }

  /**
   * After a restart, the events a previous process accepted but never finished: one never
   * started runs now if younger than `replay_window_ms`; one whose run a backend kept going (a
   * LangGraph server) is answered from that run; the rest get a notice in their chat, so nothing
   * a user sent ends in silence. `entries` were read before channels started. Resolves to the
   * entries whose notice could not be sent (the caller tries them again).
   */
  async recover(slot: ChannelSlot, entries: InboxEntry[]): Promise<InboxEntry[]> {
    const unsent: InboxEntry[] = [];
    const { logger, settings } = this.options;
    const { store } = this.conversations.scopeOf(slot.name);
    for (const entry of entries.filter((e) => e.channel === slot.name)) {
      const msg = entry.payload as unknown as InboundMessage;
      try {
        if (entry.state === "received" && Date.now() - entry.receivedAt <= settings.replay_window_ms) {
          // Accepted but never started: it runs now, in its conversation's order.
          logger.info({ channel: slot.name, eventId: entry.eventId }, "running a message a previous process accepted");
          await this.route(slot, msg);
          continue;
        }
        if (entry.state === "running" && (await this.rejoin(slot, msg))) continue;
        await this.notify(slot, msg.ref, entry.state === "received" ? NOTICES.tooOld : NOTICES.restarted, true);
        await store.setInboxState(entry.channel, entry.eventId, "failed", "interrupted by a restart");
      } catch (err) {
        unsent.push(entry);
        logger.error({ err, channel: slot.name, eventId: entry.eventId }, "could not send the restart notice");
      }
    }
    return unsent;
  }

  /**
   * Queues the rendering of the run a previous process started for `msg`, if the backend still
   * has it; false when there is none (or it cannot be looked up), and the message is lost.
   */
  private async rejoin(slot: ChannelSlot, msg: InboundMessage): Promise<boolean> {
    const { logger } = this.options;
    const binding = await this.conversations.scopeOf(slot.name).store.currentBinding(msg.ref.key);
    if (!binding) return false;
    const { threadId } = binding;
    if (!(await this.conversations.servesThread(slot.name, msg.ref.key, threadId))) return false;
    const harness = await this.conversations.harnessOfThread(slot.name, msg.ref.key, threadId);
    if (!harness.reattach) return false;
    // The run reads this signal once rendering starts; execute() links its own to it.
    const stop = new AbortController();
    const events = await harness
      .reattach(threadId, runTag(slot, msg), { signal: stop.signal, user: msg.user })
      .catch((err: unknown) => {
        logger.warn({ err, channel: slot.name, eventId: msg.eventId }, "could not look for the run of an unfinished message");
        return undefined;
      });
    if (!events) return false;
    logger.info({ channel: slot.name, eventId: msg.eventId, threadId }, "rejoining the run of an unfinished message");
    const job = () =>
      this.track(
        slot,
        msg,
        () =>
          this.execute(slot, msg, threadId, (opts) => {
            opts.signal?.addEventListener("abort", () => stop.abort(opts.signal?.reason), { once: true });
            return events;
          }),
        true,
      );
    // With replicas the conversation's later messages wait for this one in the store (its entry is
    // still running), so it must not wait behind them in the queue.
    if (!this.options.replicas) return this.queue.push(msg.ref.key, job);
    this.inBackground(job());
    return true;
  }

  private async notify(slot: ChannelSlot, ref: ConversationRef, text: string, rethrow = false): Promise<void> {
    try {
      await sendNotice(this.channelOf(slot), ref, text, this.hooks(slot));
    } catch (err) {
      slot.noteError(err);
      this.options.logger.error({ err, channel: slot.name }, "could not send a notice");
      if (rethrow) throw err;
    }
  }

  private hooks(slot: ChannelSlot, runStarted?: number): RenderHooks {
    const observer = this.options.observer;
    return {
      onOutbound: (kind) => {
        slot.lastOutboundAt = Date.now();
        observer?.apiCall?.(slot.name, kind);
      },
      onRateLimited: () => {
        slot.counters.rate_limited++;
        observer?.rateLimited?.(slot.name);
        observer?.apiError?.(slot.name, "rate_limited");
      },
      onFirstVisible: () => {
        if (runStarted !== undefined) observer?.firstVisible?.(slot.name, (Date.now() - runStarted) / 1000);
      },
      onError: (err) => {
        slot.noteError(err);
        observer?.apiError?.(slot.name, (err as { code?: string }).code ?? "unknown");
      },
    };
  }

  private channelOf(slot: ChannelSlot): Channel {
    if (!slot.channel) throw new Error(`channel ${slot.name} is not loaded`);
    return slot.channel;
  }
}
