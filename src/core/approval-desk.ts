/**
 * The approval desk: the pipeline's side of tool approval (see approvals.ts for the rules).
 * It posts one message per paused call, records each decision as it comes (click or text),
 * shows the outcome on the call's message, rejects what is still open at the deadline or on
 * `/stop`, and resumes the run once every call is decided. Decisions arrive through the
 * conversation's queue, so they are handled in order with the conversation's other messages.
 */
import type { PendingQuestion } from "../bindings/types.js";
import type { ConversationRef, InboundMessage, MessageHandle } from "../channels/types.js";
import { CLOSED_CALL_TEXT } from "../harness/repair.js";
import type { ApprovalAnswer, ApprovalRequest, Decision } from "../harness/types.js";
import { mayAnswer, tellPrivately } from "./answer-rights.js";
import {
  type ApprovalState,
  approvalOf,
  decide,
  openCalls,
  outcomeLine,
  parseButton,
  parseEditedArgs,
  parseText,
  requestContent,
  waitText,
  withApproval,
} from "./approvals.js";
import type { CoreContext } from "./context.js";
import { closeQuestion } from "./render/index.js";
import { postChunked } from "./render/notice.js";
import { Outbound } from "./render/outbound.js";
import { editInterval } from "./render/types.js";
import type { ChannelScope } from "./scope.js";

/** Who may decide a call and how long it may wait, from the agent's `approvals` rule. */
export interface ApprovalPolicy {
  approvers: string[];
  timeout_ms: number;
}

/**
 * What the desk needs from the pipeline's questions: how a decision from someone who may not
 * decide is refused, and how the paused run resumes once every call is decided.
 */
export interface ApprovalHost {
  refuse(scope: ChannelScope, msg: InboundMessage, pending: PendingQuestion): Promise<void>;
  /** Resumes the paused run with the decisions (a turn like any other: slot, render, questions). */
  resumeWith(scope: ChannelScope, msg: InboundMessage, pending: PendingQuestion, answer: ApprovalAnswer): Promise<void>;
}

/** How long a call waits when no rule says (an interrupt of a user's graph or a remote agent). */
const DEFAULT_TIMEOUT_MS = 600_000;

export const APPROVAL_NOTICES = {
  stopped: "Stopped: the tool calls waiting for approval were rejected and not run.",
  /** What the model reads as the result of a call rejected by `/stop`. */
  stoppedCall: CLOSED_CALL_TEXT.stopped,
  timedOut: (waitMs: number) => `No decision within ${waitText(waitMs)}: the call was rejected.`,
  hint: 'Tool calls are waiting for a decision: use the buttons, or reply "approve" or "reject <reason>".',
  editPrompt: (name: string) => `Send the new arguments for ${name} as a JSON object.`,
  notEditable: "That call cannot be edited: approve or reject it.",
} as const;

export class ApprovalDesk {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly core: CoreContext,
    private readonly host: ApprovalHost,
  ) {}

  /** The rule of `tool` in the approvals of the agent; undefined when none matches. */
  private policy(scope: ChannelScope, agent: string, tool: string): ApprovalPolicy | undefined {
    return this.core.options.agents.approvalPolicy?.(scope.tenant, agent, tool);
  }

  /** A run paused on `requests`: posts a message per call and stores the approval. */
  async open(scope: ChannelScope, ref: ConversationRef, base: PendingQuestion, requests: ApprovalRequest[]): Promise<void> {
    const channel = scope.channel;
    const agent = await this.core.conversations.agentOfThread(scope, base.key, base.threadId);
    const policies = requests.map((r) => this.policy(scope, agent, r.name));
    const timeout = Math.min(...policies.map((p) => p?.timeout_ms ?? DEFAULT_TIMEOUT_MS));
    const out = new Outbound(channel, scope.hooks(), editInterval(channel, ref));
    const posted: (MessageHandle | null)[] = [];
    for (const [i, request] of requests.entries()) {
      const handles = await postChunked(out, ref, requestContent(channel, request, i, base.questionId)).catch((err: unknown) => {
        this.core.logger.warn({ err, channel: scope.name }, "could not post a tool call for approval");
        return [];
      });
      posted.push(handles.at(-1) ?? null);
    }
    const state: ApprovalState = {
      requests,
      decisions: requests.map(() => null),
      decidedBy: requests.map(() => null),
      posted,
      deadline: Date.now() + timeout,
      waitMs: timeout,
      approvers: [...new Set(policies.flatMap((p) => p?.approvers ?? []))],
    };
    const pending = withApproval(base, state);
    await scope.store.setPending(pending);
    this.arm(scope, pending);
  }

  /** A click on one of the calls' buttons. */
  async click(scope: ChannelScope, msg: InboundMessage, pending: PendingQuestion): Promise<void> {
    const state = approvalOf(pending)!;
    const pressed = parseButton(msg.action?.buttonId ?? "");
    const request = pressed && state.requests[pressed.index];
    if (!pressed || !request || state.decisions[pressed.index] !== null) return this.stale(scope, msg);
    if (!this.mayDecide(scope, msg, pending, state)) return this.host.refuse(scope, msg, pending);
    const channel = scope.channel;
    await channel.answerAction?.(msg).catch(() => false);
    if (pressed.type === "edit") {
      if (!request.allowed.includes("edit")) return scope.notify(msg.ref, APPROVAL_NOTICES.notEditable);
      return this.beginEdit(scope, msg, pending, state, pressed.index);
    }
    const decision: Decision = pressed.type === "approve" ? { type: "approve" } : { type: "reject" };
    await this.record(scope, msg, pending, state, [pressed.index], decision);
  }

  /** A message while calls wait: edited arguments, `approve`, `reject <reason>`, or a hint. */
  async text(scope: ChannelScope, msg: InboundMessage, pending: PendingQuestion): Promise<void> {
    const state = approvalOf(pending)!;
    if (!this.mayDecide(scope, msg, pending, state)) return this.host.refuse(scope, msg, pending);
    if (state.editing && state.editing.userId === msg.user.id) return this.edited(scope, msg, pending, state);
    const typed = parseText(msg.text);
    if (!typed) return scope.notify(msg.ref, APPROVAL_NOTICES.hint);
    if (typed.type === "edit") return this.startEdit(scope, msg, pending, state);
    const decision: Decision =
      typed.type === "approve" ? { type: "approve" } : { type: "reject", ...(typed.message ? { message: typed.message } : {}) };
    // Typed words decide every open call the decision is allowed for.
    const open = openCalls(state).filter((i) => state.requests[i]?.allowed.includes(decision.type));
    await this.record(scope, msg, pending, state, open, decision);
  }

  /**
   * `/stop` in a conversation whose run waits for approval: every open call is rejected and
   * nothing is resumed. The backend closes the calls now (`Harness.closePending`), so the model
   * reads on the next run that the user stopped them. False when none waits.
   */
  async stop(scope: ChannelScope, key: string, by: string): Promise<boolean> {
    const store = scope.store;
    const threadId = await store.currentThread(key);
    const pending = threadId ? await store.getPending(threadId) : undefined;
    const state = pending && approvalOf(pending);
    if (!pending || !state) return false;
    this.disarm(pending.threadId);
    await store.clearPending(pending.threadId);
    await this.closeOnBackend(scope, pending);
    let next = state;
    for (const i of openCalls(state)) next = decide(next, i, { type: "reject", message: APPROVAL_NOTICES.stoppedCall }, by);
    await this.showOutcomes(scope, state, next);
    const ref = state.posted.find((p) => p)?.ref;
    if (ref) await scope.notify(ref, APPROVAL_NOTICES.stopped);
    return true;
  }

  /** Tells the backend the calls were stopped; a failure is logged (the next run then closes them as unanswered). */
  private async closeOnBackend(scope: ChannelScope, pending: PendingQuestion): Promise<void> {
    try {
      const harness = await this.core.conversations.harnessOfThread(scope, pending.key, pending.threadId);
      await harness.closePending?.(pending.threadId, APPROVAL_NOTICES.stoppedCall);
    } catch (err) {
      scope.noteError(err);
      this.core.logger.warn({ err, channel: scope.name, threadId: pending.threadId }, "could not close the stopped tool calls");
    }
  }

  /** After a (re)start: arms the deadline of every approval waiting in this channel's chats. */
  async resumeDeadlines(scope: ChannelScope): Promise<void> {
    for (const pending of await scope.store.pendingApprovals()) {
      const ref = approvalOf(pending)?.posted.find((p) => p)?.ref;
      if (ref?.channel === scope.name || pending.key.startsWith(`${scope.name}:`)) this.arm(scope, pending);
    }
  }

  /** Stops every deadline timer (shutdown). */
  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** A typed `edit` (where there are no buttons): the first open call that may be edited. */
  private async startEdit(
    scope: ChannelScope,
    msg: InboundMessage,
    pending: PendingQuestion,
    state: ApprovalState,
  ): Promise<void> {
    const index = openCalls(state).find((i) => state.requests[i]?.allowed.includes("edit"));
    if (index === undefined) return scope.notify(msg.ref, APPROVAL_NOTICES.notEditable);
    return this.beginEdit(scope, msg, pending, state, index);
  }

  /** The sender's next message holds the new arguments of call `index`. */
  private async beginEdit(
    scope: ChannelScope,
    msg: InboundMessage,
    pending: PendingQuestion,
    state: ApprovalState,
    index: number,
  ): Promise<void> {
    await scope.store.setPending(withApproval(pending, { ...state, editing: { index, userId: msg.user.id } }));
    await scope.notify(msg.ref, APPROVAL_NOTICES.editPrompt(state.requests[index]!.name));
  }

  private async edited(scope: ChannelScope, msg: InboundMessage, pending: PendingQuestion, state: ApprovalState): Promise<void> {
    const index = state.editing!.index;
    const request = state.requests[index]!;
    const args = parseEditedArgs(msg.text);
    if (typeof args === "string") return scope.notify(msg.ref, args);
    const harness = await this.core.conversations.harnessOfThread(scope, pending.key, pending.threadId);
    const problem = await harness.checkToolArgs?.(request, args);
    if (problem) return scope.notify(msg.ref, `${problem} Send them again.`);
    await this.record(scope, msg, pending, state, [index], { type: "edit", args });
  }

  /** Records `decision` for the calls `indexes`, shows it, and resumes the run when none is open. */
  private async record(
    scope: ChannelScope,
    msg: InboundMessage,
    pending: PendingQuestion,
    state: ApprovalState,
    indexes: number[],
    decision: Decision,
  ): Promise<void> {
    let next = state;
    const by = msg.user.name ?? msg.user.id;
    for (const i of indexes) next = decide(next, i, decision, by);
    await this.showOutcomes(scope, state, next);
    await this.settle(scope, msg, withApproval(pending, next), next);
  }

  /** Stores the state, or, when every call is decided, clears it and resumes the run. */
  private async settle(scope: ChannelScope, msg: InboundMessage, pending: PendingQuestion, state: ApprovalState): Promise<void> {
    if (openCalls(state).length > 0) return scope.store.setPending(pending);
    this.disarm(pending.threadId);
    await scope.store.clearPending(pending.threadId);
    await this.host.resumeWith(scope, msg, pending, { decisions: state.decisions as Decision[] });
  }

  /** Edits the message of each call decided between `before` and `after` to show its outcome. */
  private async showOutcomes(scope: ChannelScope, before: ApprovalState, after: ApprovalState): Promise<void> {
    const channel = scope.channel;
    for (const [i, decision] of after.decisions.entries()) {
      const handle = after.posted[i];
      if (!decision || before.decisions[i] || !handle) continue;
      const request = after.requests[i]!;
      const text = requestContent(channel, request, i, "").text;
      await closeQuestion(channel, handle, text, outcomeLine(decision, after.decidedBy[i] ?? null), scope.hooks()).catch(
        (err: unknown) => this.core.logger.warn({ err, channel: scope.name }, "could not show a call's outcome"),
      );
    }
  }

  private mayDecide(scope: ChannelScope, msg: InboundMessage, pending: PendingQuestion, state: ApprovalState): boolean {
    return mayAnswer(scope.access, pending, msg) || state.approvers.includes(msg.user.id);
  }

  private async stale(scope: ChannelScope, msg: InboundMessage): Promise<void> {
    const text = "That call is already decided.";
    if (await tellPrivately(scope.channel, msg, text, this.core.logger)) return;
    await scope.notify(msg.ref, text);
  }

  private arm(scope: ChannelScope, pending: PendingQuestion): void {
    const state = approvalOf(pending);
    if (!state) return;
    this.disarm(pending.threadId);
    const wait = Math.max(0, state.deadline - Date.now());
    const timer = setTimeout(() => {
      this.timers.delete(pending.threadId);
      this.core.queue.push(pending.key, () => this.expire(scope, pending));
    }, wait);
    timer.unref();
    this.timers.set(pending.threadId, timer);
  }

  private disarm(threadId: string): void {
    clearTimeout(this.timers.get(threadId));
    this.timers.delete(threadId);
  }

  /** The deadline passed: every call still open is rejected, and the run resumes. */
  private async expire(scope: ChannelScope, armed: PendingQuestion): Promise<void> {
    const pending = await scope.store.getPending(armed.threadId);
    const state = pending && approvalOf(pending);
    if (!pending || !state || pending.questionId !== armed.questionId) return;
    // Approvals stored before the wait was kept: the time from the question to its deadline, to the second.
    const wait = state.waitMs ?? Math.max(1000, Math.round((state.deadline - pending.createdAt) / 1000) * 1000);
    const reason = APPROVAL_NOTICES.timedOut(wait);
    let next = state;
    for (const i of openCalls(state)) next = decide(next, i, { type: "reject", message: reason }, null);
    await this.showOutcomes(scope, state, next);
    const ref = state.posted.find((p) => p)?.ref;
    if (!ref) return scope.store.clearPending(pending.threadId);
    const asker = pending.askedBy ?? { id: "" };
    const msg: InboundMessage = {
      channel: scope.name,
      eventId: `approval-timeout:${pending.questionId}`,
      ref,
      user: asker,
      text: "",
      mentioned: true,
      sentAt: Date.now(),
    };
    await this.settle(scope, msg, withApproval(pending, next), next);
  }
}
