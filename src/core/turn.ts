/**
 * One turn: a source (today an inbound message; a scheduled or API-sent turn gives the same
 * three facts) → the global run limit → the harness's run → the reply rendered in the chat →
 * what the run left behind (the agent's files, a question, an approval to ask for). The turn is
 * registered as the conversation's message in progress from before it waits for a run slot, so
 * `/stop` reaches it early.
 */
import { randomBytes } from "node:crypto";
import type { PendingQuestion } from "../bindings/types.js";
import type { ConversationRef, InboundMessage, TurnOrigin } from "../channels/types.js";
import { toRunError } from "../harness/run-errors.js";
import type { RunEvent, RunOptions } from "../harness/types.js";
import type { ApprovalDesk } from "./approval-desk.js";
import type { CoreContext } from "./context.js";
import { tapPartial } from "./followups/board.js";
import { progressFor } from "./followups/settings.js";
import { runUser } from "./identity.js";
import { LeftForNextProcess, ReportedFailure } from "./inbox.js";
import { limitNotice, NOTICES } from "./notices.js";
import { type RenderOutcome, renderRun } from "./render/index.js";
import { TypingLoop } from "./render/typing.js";
import { untilAbandoned } from "./run-guard.js";
import type { ChannelScope } from "./scope.js";
import { RunSlot } from "./slot-guard.js";
import { handleToJson } from "./stored.js";

/** Where a turn comes from: the conversation its reply goes to, whom it runs for, and its tag. */
export interface TurnSource {
  /** The conversation the reply goes to (`ref.key` is the conversation key). */
  ref: ConversationRef;
  /** Whom the run acts for. */
  user: { id: string; name?: string };
  /** The tag the run carries, so a restarted gateway can find the run again. */
  tag: string;
  /** Set for a turn nobody typed (an API call, a schedule). */
  origin?: TurnOrigin;
}

/** The source of a turn an inbound message starts. */
export function messageSource(scope: ChannelScope, msg: InboundMessage): TurnSource {
  return { ref: msg.ref, user: msg.user, tag: `${scope.name}:${msg.eventId}`, ...(msg.origin ? { origin: msg.origin } : {}) };
}

/** Starts (or resumes, or rejoins) the harness's run with the options the turn gives it. */
export type StartRun = (opts: RunOptions) => AsyncIterable<RunEvent>;

export class Turns {
  constructor(
    private readonly core: CoreContext,
    private readonly desk: ApprovalDesk,
  ) {}

  /**
   * Runs one turn in `threadId`. `claimed`: the stop switch the caller registered already;
   * `asker`: who a question the run asks belongs to (the source's user unless it resumes theirs).
   */
  async run(
    scope: ChannelScope,
    source: TurnSource,
    threadId: string,
    start: StartRun,
    claimed?: AbortController,
    asker: { id: string; name?: string } = source.user,
  ): Promise<void> {
    const { core } = this;
    // Registered before waiting for a run slot, so /stop reaches a message that waits for one.
    const controller = claimed ?? core.active.claim(source.ref.key);
    // Counted from now, so a message waiting for a run slot shows the indicator as well.
    const typing = new TypingLoop(scope.channel, source.ref, core.logger);
    typing.start(core.settings.typing_delay_ms);
    const release = await core.runs.acquire();
    if (!core.accepting || controller.signal.aborted) {
      release();
      void typing.stop();
      core.active.release(source.ref.key, controller);
      return this.stopped(scope, source.ref, controller.signal);
    }
    const questionId = randomBytes(6).toString("base64url");
    const outcome = await this.render(scope, source, start, { controller, release, typing, questionId });
    // Left running for the next process: the inbox entry must stay unfinished.
    if (outcome.kind === "error" && outcome.code === "detached") throw new LeftForNextProcess("running");
    await this.after(scope, source, threadId, outcome, { questionId, asker });
    // The chat has seen the error already; the outbox learns the turn failed from the inbox.
    if (source.origin && outcome.kind === "error") throw new ReportedFailure(outcome.code);
  }

  /** A message stopped before its run started: left to the next process when stopping, else the stopped notice. */
  stopped(scope: ChannelScope, ref: ConversationRef, signal: AbortSignal): Promise<void> {
    if (!this.core.accepting) throw new LeftForNextProcess("received");
    return scope.notify(ref, `⚠️ ${toRunError(undefined, true, signal.reason).message}`);
  }

  /** The run under the run slot and its time limit, rendered in the chat. */
  private async render(
    scope: ChannelScope,
    source: TurnSource,
    start: StartRun,
    turn: { controller: AbortController; release: () => void; typing: TypingLoop; questionId: string },
  ): Promise<RenderOutcome> {
    const { core } = this;
    const { controller, typing } = turn;
    const key = source.ref.key;
    const runSlot = new RunSlot(core.runs, turn.release, core.settings.stall_release_ms);
    const timer = setTimeout(
      () => controller.abort(new DOMException("the run took too long", "TimeoutError")),
      core.settings.run_timeout_ms,
    );
    const started = Date.now();
    scope.events.runStarted();
    let outcome: RenderOutcome | undefined;
    try {
      const origin = { channel: scope.name, conversation: key, chat: source.ref.chatId, tenant: scope.tenant };
      const context = { channel: scope.name, chat_type: source.ref.chatType, tenant: scope.tenant };
      const user = runUser(scope, source.user, source.ref.chatType);
      const conversation = { tenant: scope.tenant, channel: scope.name, key, user };
      const opts = { signal: controller.signal, user, context, origin, conversation, tag: source.tag };
      // Its reply text is kept on the board as it streams: a follow-up that interrupts it hands it to the next turn.
      const run = tapPartial(start(opts), core.board.byController(key, controller));
      // The run slot covers the agent's run only (and not while its stream stalls): pacing the last edits must not hold it.
      const events = runSlot.guard(
        untilAbandoned(run, controller.signal, (err) =>
          core.logger.warn({ err, channel: scope.name, key }, "a run ignored its abort; abandoned it"),
        ),
      );
      outcome = await renderRun(events, {
        channel: scope.channel,
        ref: source.ref,
        logger: core.logger,
        hooks: scope.hooks(started),
        questionId: turn.questionId,
        callTimeoutMs: core.settings.platform_call_timeout_ms,
        retryBudgetMs: core.settings.delivery_retry_ms,
        progress: progressFor(core, scope, source),
        ...(core.options.scrub ? { scrub: core.options.scrub } : {}),
        typing,
      });
    } finally {
      void typing.stop();
      clearTimeout(timer);
      core.active.release(key, controller);
      runSlot.free();
      scope.events.runFinished(outcome?.kind ?? "error", (Date.now() - started) / 1000);
    }
    return outcome;
  }

  /** What the run left behind: the agent's files, the limit or empty-reply notice, a question or an approval. */
  private async after(
    scope: ChannelScope,
    source: TurnSource,
    threadId: string,
    outcome: RenderOutcome,
    turn: { questionId: string; asker: { id: string; name?: string } },
  ): Promise<void> {
    const { media } = this.core.options;
    if (media && (outcome.kind === "done" || outcome.kind === "clarification")) {
      for (const notice of await media.deliver(scope.channel, source.ref, threadId, (err) => scope.noteError(err))) {
        await scope.notify(source.ref, notice);
      }
    }
    // A run cut at a limit says so (and that explains an empty reply too); a run of only tool
    // calls (or blank text) otherwise posts nothing, and silence would look like a lost message.
    if (outcome.kind === "done" && outcome.limit) await scope.notify(source.ref, limitNotice(outcome.limit));
    else if (outcome.kind === "done" && outcome.messages.length === 0) await scope.notify(source.ref, NOTICES.noReply);
    if (outcome.kind !== "clarification") return;
    const c = outcome.clarification;
    const { asker } = turn;
    const pending: PendingQuestion = {
      threadId,
      key: source.ref.key,
      questionId: turn.questionId,
      interruptId: c.interruptId,
      question: c.question,
      options: c.options,
      ...(c.kind ? { kind: c.kind } : {}),
      posted: handleToJson(outcome.question),
      askedBy: { id: asker.id, ...(asker.name ? { name: asker.name } : {}) },
      createdAt: Date.now(),
    };
    if (c.approval) await this.desk.open(scope, source.ref, pending, c.approval.requests);
    else await scope.store.setPending(pending);
  }
}
