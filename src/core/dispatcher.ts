/**
 * The dispatcher: the one entrance to the message pipeline, which the gateway and the tests
 * construct. Every inbound message from every channel passes through the rooms it wires, in the
 * order of a message's path (README.md): the channel's sink (sinks.ts) → the inbox (record,
 * dedupe) → the verdict and the conversation's queue (intake.ts) → its turn in the queue
 * (messages.ts: commands, questions, a new turn) → the run and its reply (turn.ts). Every
 * accepted message ends in a reply or an explicit notice, also across a crash (recovery.ts).
 */
import type { InboxEntry } from "../bindings/types.js";
import type { ChannelSlot } from "../channels/registry.js";
import type { ConversationHistory, InboundMessage, InboundSink } from "../channels/types.js";
import { ChatCommands } from "./chat-commands.js";
import { CoreContext, type DispatcherOptions } from "./context.js";
import { Followups } from "./followups/index.js";
import { conversationHistory } from "./history.js";
import { Inbox } from "./inbox.js";
import { Intake } from "./intake.js";
import { Messages } from "./messages.js";
import { Questions } from "./questions.js";
import { Recovery } from "./recovery.js";
import { RecoveryHold } from "./recovery-hold.js";
import { type ChannelScope, Scopes } from "./scope.js";
import { channelSink } from "./sinks.js";

export type { DispatcherOptions, ReplicaCoordinator } from "./context.js";
export { NOTICES } from "./notices.js";
export type { DispatcherObserver } from "./observer.js";

export class Dispatcher {
  private readonly core: CoreContext;
  private readonly scopes: Scopes;
  private readonly questions: Questions;
  private readonly intake: Intake;
  private readonly recovery: Recovery;

  constructor(options: DispatcherOptions) {
    const core = new CoreContext(options);
    this.core = core;
    this.scopes = new Scopes(core.conversations, options.observer, options.logger);
    this.questions = new Questions(core);
    const commands = new ChatCommands(core, this.questions.desk);
    const inbox = new Inbox(core);
    const followups: Followups = new Followups(core, inbox, (scope, msgs): Promise<void> => messages.handleGroup(scope, msgs));
    const messages: Messages = new Messages(core, this.questions, commands, followups);
    this.intake = new Intake(core, inbox, messages, commands, followups);
    this.recovery = new Recovery(core, inbox, this.intake, this.questions.turns);
  }

  /** Runs in progress across all conversations (not counting those waiting for a slot). */
  get activeRuns(): number {
    return this.core.runs.inUse;
  }

  /** Messages waiting in conversation queues. */
  get queueDepth(): number {
    return this.core.queue.depth;
  }

  /** The sink a channel delivers into. Resolves once the message is durably recorded and queued. */
  sinkFor(slot: ChannelSlot): InboundSink {
    return channelSink(this.core, this.scopes.of(slot), (scope, msg) => this.intake.receive(scope, msg));
  }

  /**
   * Hands a turn nobody typed (an API call, a schedule's fire) to the pipeline, as the channel's
   * sink would: recorded in the inbox (once: a second hand-over of the same event is a duplicate),
   * then queued in its conversation.
   */
  submit(scope: ChannelScope, msg: InboundMessage): Promise<void> {
    return this.intake.receive(scope, msg);
  }

  /** A channel as the pipeline sees it: its tenant's store, its notices and render hooks. */
  scopeOf(slot: ChannelSlot): ChannelScope {
    return this.scopes.of(slot);
  }

  /** A conversation of `slot` read back: its thread's history and what waits for a click (a web page's reload). */
  history(slot: ChannelSlot, key: string): Promise<ConversationHistory> {
    const scope = this.scopes.of(slot);
    return conversationHistory(this.core.conversations, scope, key);
  }

  /** Resolves when every queued and running message, command and notice is finished. */
  idle(): Promise<void> {
    return this.core.idle();
  }

  /**
   * Shutdown, first step: refuses new messages (not acked, so the platform delivers them again to
   * the next process) and starts no new run. Messages already accepted but not started stay in
   * the inbox, and the next process runs them (see `recover`). Running replies go on.
   */
  stopAccepting(): void {
    this.core.accepting = false;
    this.questions.desk.close();
  }

  /**
   * Another replica asked to stop a conversation's reply (its `/stop`, made `madeMsAgo` ago):
   * stops it if it runs here and began before the request, never a later reply.
   */
  stopConversation(key: string, madeMsAgo = 0): boolean {
    return this.core.active.stopIfBefore(key, madeMsAgo);
  }

  /** After a channel (re)started: tool approvals waiting in its chats get their deadlines again. */
  async armApprovals(slot: ChannelSlot): Promise<void> {
    await this.questions.desk.resumeDeadlines(this.scopes.of(slot));
  }

  /**
   * Shutdown, after the drain: stops every running reply. A backend whose runs outlive the
   * gateway leaves them going (the next process rejoins them); a local run is cut off, and its
   * user is told the gateway is restarting.
   */
  cancelAll(): void {
    this.core.accepting = false;
    this.core.active.abortAll(new DOMException("the gateway is shutting down", "DetachError"));
  }

  /**
   * After a restart, the events a previous process accepted but never finished (see
   * recovery.ts). `entries` were read before channels started. Resolves to the entries whose
   * notice could not be sent (the caller tries them again).
   */
  recover(slot: ChannelSlot, entries: InboxEntry[], hold?: RecoveryHold): Promise<InboxEntry[]> {
    return this.recovery.recover(this.scopes.of(slot), entries, hold);
  }

  /**
   * Before a channel starts: keeps each conversation with `entries` at the front of its queue
   * until `recover` answers them there, so what the channel delivers first waits behind them.
   */
  hold(slot: ChannelSlot, entries: InboxEntry[]): RecoveryHold {
    return new RecoveryHold(
      this.core,
      entries.filter((e) => e.channel === slot.name).map((e) => e.key),
    );
  }

  /**
   * Resolves once nothing of the channel's conversations runs or waits here: no reply, and no
   * queued message that would still answer through the channel. Checked every 100 ms: it serves a
   * channel being retired, which is rare, and the queue has no event per conversation.
   */
  async settledOn(channel: string): Promise<void> {
    const ours = (key: string) => key.startsWith(`${channel}:`);
    while (this.core.queue.keys().some(ours) || this.core.active.keys().some(ours)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
