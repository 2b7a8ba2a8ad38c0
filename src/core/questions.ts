/**
 * Questions a run left open, and their answers: a click on a question's button or a message
 * while one waits answers it and resumes the run; a click on a question that is gone, or from
 * someone who may not answer, is told so (privately where the platform can). Tool approvals go
 * to the approval desk, which resumes the run through this room when every call is decided.
 */
import type { PendingQuestion } from "../bindings/types.js";
import type { InboundMessage } from "../channels/types.js";
import type { ApprovalAnswer, RunOptions } from "../harness/types.js";
import { acknowledgeClick, mayAnswer, refuseAnswer, tellPrivately } from "./answer-rights.js";
import { type Answer, answerFromButton, answerFromText } from "./answers.js";
import { ApprovalDesk, type ApprovalHost } from "./approval-desk.js";
import { approvalOf } from "./approvals.js";
import type { CoreContext } from "./context.js";
import { closeDropped, DROPPED_NOTICES, tellDropped } from "./dropped-questions.js";
import { NOTICES } from "./notices.js";
import { closeQuestion } from "./render/index.js";
import type { ChannelScope } from "./scope.js";
import { handleFromJson } from "./stored.js";
import { messageSource, Turns } from "./turn.js";

export class Questions implements ApprovalHost {
  readonly desk: ApprovalDesk;
  /** Turns run here: a resumed run and a new one go the same way. */
  readonly turns: Turns;

  constructor(private readonly core: CoreContext) {
    this.desk = new ApprovalDesk(core, this);
    this.turns = new Turns(core, this.desk);
  }

  /** A message in a thread where `pending` waits: a decision, an answer, or a refusal. */
  async answerText(
    scope: ChannelScope,
    msg: InboundMessage,
    pending: PendingQuestion,
    text: string,
    controller: AbortController,
  ): Promise<void> {
    await this.resume(scope, msg, pending, answerFromText(pending, text), controller);
  }

  /** Whether the sender of `msg` may answer `pending` (else it is refused, see `refuse`). */
  mayAnswer(scope: ChannelScope, msg: InboundMessage, pending: PendingQuestion): boolean {
    return mayAnswer(scope.access, pending, msg);
  }

  /** A click on a question's (or a tool call's) button. */
  async click(scope: ChannelScope, msg: InboundMessage): Promise<void> {
    const action = msg.action!;
    const { conversations, logger } = this.core;
    // Looked up among this tenant's questions only: a forged id of another tenant's finds nothing.
    const found = await scope.store.findPendingByQuestionId(action.questionId);
    const pending = found?.key === msg.ref.key ? found : undefined;
    if (pending && approvalOf(pending) && (await conversations.servesThread(scope, pending.key, pending.threadId))) {
      return this.desk.click(scope, msg, pending);
    }
    const answer = pending ? answerFromButton(pending, action.buttonId) : undefined;
    if (pending && answer && !this.mayAnswer(scope, msg, pending)) return this.refuse(scope, msg, pending);
    // A question of an agent the config no longer has cannot be resumed.
    const gone = pending && !(await conversations.servesThread(scope, pending.key, pending.threadId));
    if (pending && gone) await scope.store.clearPending(pending.threadId);
    if (gone) await closeDropped(scope.channel, pending, scope.hooks(), logger);
    if (!pending || !answer || gone) {
      const text = gone ? DROPPED_NOTICES.click : NOTICES.staleQuestion;
      if (await tellPrivately(scope.channel, msg, text, logger)) return;
      return void (await scope.notify(msg.ref, text));
    }
    await acknowledgeClick(scope.channel, msg, logger);
    await this.resume(scope, msg, pending, answer);
  }

  /** The routes moved the conversation off a thread with an open question: the user hears it once. */
  async tellDropped(scope: ChannelScope, msg: InboundMessage, pending: PendingQuestion): Promise<void> {
    const notify = (text: string) => scope.notify(msg.ref, text);
    await tellDropped(scope.channel, pending, notify, scope.hooks(), this.core.logger);
  }

  /** Not the asker nor an approver: the question stays open, its buttons too, and the sender is told. */
  async refuse(scope: ChannelScope, msg: InboundMessage, pending: PendingQuestion): Promise<void> {
    const notify = (text: string) => scope.notify(msg.ref, text);
    await refuseAnswer(scope.channel, msg, pending, notify, this.core.logger);
  }

  /** Answers `pending`: shows the answer on the question's message and resumes the run. */
  private async resume(
    scope: ChannelScope,
    msg: InboundMessage,
    pending: PendingQuestion,
    answer: Answer,
    controller?: AbortController,
  ): Promise<void> {
    await scope.store.clearPending(pending.threadId);
    const posted = handleFromJson(pending.posted);
    if (posted) {
      await closeQuestion(scope.channel, posted, pending.question, answer.value, scope.hooks()).catch((err: unknown) =>
        this.core.logger.warn({ err, channel: scope.name }, "could not mark the question answered"),
      );
    }
    await this.resumeWith(scope, msg, pending, answer.value, controller);
  }

  /** Resumes the run paused on `pending` with an answer or an approval's decisions (also the desk's, see ApprovalHost). */
  async resumeWith(
    scope: ChannelScope,
    msg: InboundMessage,
    pending: PendingQuestion,
    answer: string | ApprovalAnswer,
    controller?: AbortController,
  ): Promise<void> {
    const harness = await this.core.conversations.harnessOfThread(scope, pending.key, pending.threadId);
    const resume = (opts: RunOptions) => harness.resume(pending.threadId, answer, { ...opts, interruptId: pending.interruptId });
    // The run still belongs to who asked, also when an approver answered: a follow-up question is theirs too.
    await this.turns.run(scope, messageSource(scope, msg), pending.threadId, resume, controller, pending.askedBy ?? msg.user);
  }
}
