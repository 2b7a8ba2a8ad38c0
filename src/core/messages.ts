/**
 * A message's turn in its conversation's queue: a click goes to the questions; `/new` and
 * `/agent` run here, in order with the conversation's other messages; anything else finds its
 * thread, answers a question that waits there (or is refused), takes its attachments in, and
 * starts a turn.
 */
import type { PendingQuestion } from "../bindings/types.js";
import type { InboundMessage } from "../channels/types.js";
import type { RunImage, RunOptions } from "../harness/types.js";
import { approvalOf } from "./approvals.js";
import type { ChatCommands } from "./chat-commands.js";
import { parseCommand } from "./commands.js";
import type { CoreContext } from "./context.js";
import type { ThreadTarget } from "./conversations.js";
import type { BoardTurn } from "./followups/board.js";
import { collectedMessage } from "./followups/collect.js";
import type { Followups } from "./followups/index.js";
import { followupsFor } from "./followups/settings.js";
import type { TurnEnd } from "./followups/steer.js";
import { LeftForNextProcess } from "./inbox.js";
import { NOTICES } from "./notices.js";
import type { Questions } from "./questions.js";
import type { ChannelScope } from "./scope.js";
import { messageSource } from "./turn.js";

export class Messages {
  constructor(
    private readonly core: CoreContext,
    private readonly questions: Questions,
    private readonly commands: ChatCommands,
    private readonly followups: Followups,
  ) {}

  /** A closed bucket of collected messages (follow-up mode `collect`), answered as one turn. */
  handleGroup(scope: ChannelScope, msgs: InboundMessage[]): Promise<void> {
    return this.handle(scope, collectedMessage(msgs));
  }

  async handle(scope: ChannelScope, msg: InboundMessage): Promise<void> {
    if (msg.action) return this.questions.click(scope, msg);
    const command = msg.origin ? undefined : parseCommand(msg.text);
    if (command === "new") return this.commands.startNewThread(scope, msg);
    if (command === "agent") return this.commands.agent(scope, msg);
    const withFiles = (msg.attachments?.length ?? 0) > 0 && this.core.options.media !== undefined;
    if (msg.text.trim() === "" && !withFiles) return void (await scope.notify(msg.ref, NOTICES.nonText));
    const controller = this.core.active.claim(msg.ref.key);
    const board: { turn?: BoardTurn } = {};
    let end: TurnEnd = "failed";
    try {
      await this.answer(scope, msg, controller, withFiles, board);
      end = "ok";
    } catch (err) {
      if (err instanceof LeftForNextProcess) end = "left";
      throw err;
    } finally {
      this.core.active.release(msg.ref.key, controller);
      // Messages steered into the turn end with it; those its run missed are answered now, in order.
      if (board.turn) await this.followups.steering.settle(scope, board.turn, end, (s, m) => this.handle(s, m));
    }
  }

  /** The message's thread, then a question that waits there, or a new turn. */
  private async answer(
    scope: ChannelScope,
    msg: InboundMessage,
    controller: AbortController,
    withFiles: boolean,
    board: { turn?: BoardTurn },
  ): Promise<void> {
    const { questions } = this;
    const { conversations } = this.core;
    if (msg.origin?.thread === "fresh") await conversations.freshThread(scope, msg);
    let target = await conversations.threadFor(scope, msg);
    if (target.dropped) await questions.tellDropped(scope, msg, target.dropped);
    let pending = await scope.store.getPending(target.threadId);
    // A scheduled or API turn is no answer to the question that waits: the question is closed, and the turn goes on in a new thread.
    if (pending && msg.origin) {
      await questions.tellDropped(scope, msg, pending);
      await conversations.freshThread(scope, msg);
      target = await conversations.threadFor(scope, msg);
      pending = undefined;
    }
    if (pending && approvalOf(pending)) return questions.desk.text(scope, msg, pending);
    // In a shared group thread, someone else's message must neither answer nor abandon the question.
    if (pending && !questions.mayAnswer(scope, msg, pending)) return questions.refuse(scope, msg, pending);
    const { threadId, harness } = target;
    // On the board from here, so a follow-up can steer into, collect behind or interrupt this turn.
    board.turn = this.core.board.begin(msg, controller, harness, threadId);
    try {
      await this.start(scope, msg, controller, withFiles, target, pending);
    } finally {
      this.core.board.end(board.turn);
    }
  }

  /** Takes the message's attachments in, then answers the question that waits or starts a new run. */
  private async start(
    scope: ChannelScope,
    msg: InboundMessage,
    controller: AbortController,
    withFiles: boolean,
    target: ThreadTarget,
    pending: PendingQuestion | undefined,
  ): Promise<void> {
    const { questions } = this;
    const { threadId, harness } = target;
    let text = msg.text;
    let images: RunImage[] | undefined;
    const media = this.core.options.media;
    if (withFiles && media) {
      const intake = await media.intake(scope.channel, msg, threadId, target.agent, controller.signal);
      // `/stop` (or the shutdown) during a download: say so, as a stopped run does.
      if (controller.signal.aborted) return questions.turns.stopped(scope, msg.ref, controller.signal);
      for (const notice of intake.notices) await scope.notify(msg.ref, notice);
      if (intake.text.trim() === "" && intake.images.length === 0) return;
      text = intake.text;
      if (intake.images.length > 0) images = intake.images;
    }
    if (pending) return questions.answerText(scope, msg, pending, text, controller);
    // The reply a follow-up interrupted: the agent reads how far it got before this message.
    const interrupted = this.core.board.takeInterrupted(msg.ref.key);
    // Only a run messages may be steered into pays for the watch steering needs.
    const steerable = !this.core.options.replicas && (await followupsFor(this.core, scope, msg)).mode === "steer";
    const extra = { ...(images ? { images } : {}), ...(interrupted ? { interrupted } : {}), ...(steerable ? { steerable } : {}) };
    const start = (opts: RunOptions) => harness.run(threadId, text, { ...opts, ...extra });
    await questions.turns.run(scope, messageSource(scope, msg), threadId, start, controller);
  }
}
