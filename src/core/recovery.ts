/**
 * After a restart (or when this replica takes over the messages of one that died): the messages
 * a previous process accepted but never finished. One never started runs now if younger than
 * `replay_window_ms`; one whose run a backend kept going (a LangGraph server) is answered from
 * that run (rejoined); the rest get a notice in their chat, so nothing a user sent ends in silence.
 */
import type { InboxEntry } from "../bindings/types.js";
import type { InboundMessage } from "../channels/types.js";
import type { CoreContext } from "./context.js";
import type { Inbox } from "./inbox.js";
import type { Intake } from "./intake.js";
import { NOTICES } from "./notices.js";
import type { ChannelScope } from "./scope.js";
import { messageFromJson } from "./stored.js";
import { messageSource, type Turns } from "./turn.js";

export class Recovery {
  constructor(
    private readonly core: CoreContext,
    private readonly inbox: Inbox,
    private readonly intake: Intake,
    private readonly turns: Turns,
  ) {}

  /** Answers `entries` of the scope's channel; resolves to those whose notice could not be sent (tried again later). */
  async recover(scope: ChannelScope, entries: InboxEntry[]): Promise<InboxEntry[]> {
    const unsent: InboxEntry[] = [];
    const { logger, settings } = this.core;
    for (const entry of entries.filter((e) => e.channel === scope.name)) {
      try {
        const msg = messageFromJson(entry.payload);
        if (entry.state === "received" && Date.now() - entry.receivedAt <= settings.replay_window_ms) {
          // Accepted but never started: it runs now, in its conversation's order.
          logger.info({ channel: scope.name, eventId: entry.eventId }, "running a message a previous process accepted");
          await this.intake.route(scope, msg);
          continue;
        }
        if (entry.state === "running" && (await this.rejoin(scope, msg))) continue;
        await scope.notify(msg.ref, entry.state === "received" ? NOTICES.tooOld : NOTICES.restarted, true);
        await scope.store.setInboxState(entry.channel, entry.eventId, "failed", "interrupted by a restart");
      } catch (err) {
        unsent.push(entry);
        logger.error({ err, channel: scope.name, eventId: entry.eventId }, "could not send the restart notice");
      }
    }
    return unsent;
  }

  /**
   * Queues the rendering of the run a previous process started for `msg`, if the backend still
   * has it; false when there is none (or it cannot be looked up), and the message is lost.
   */
  private async rejoin(scope: ChannelScope, msg: InboundMessage): Promise<boolean> {
    const { core } = this;
    const binding = await scope.store.currentBinding(msg.ref.key);
    if (!binding) return false;
    const { threadId } = binding;
    if (!(await core.conversations.servesThread(scope, msg.ref.key, threadId))) return false;
    const harness = await core.conversations.harnessOfThread(scope, msg.ref.key, threadId);
    if (!harness.reattach) return false;
    const source = messageSource(scope, msg);
    // The run reads this signal once rendering starts; the turn links its own to it.
    const stop = new AbortController();
    const events = await harness.reattach(threadId, source.tag, { signal: stop.signal, user: msg.user }).catch((err: unknown) => {
      core.logger.warn({ err, channel: scope.name, eventId: msg.eventId }, "could not look for the run of an unfinished message");
      return undefined;
    });
    if (!events) return false;
    core.logger.info({ channel: scope.name, eventId: msg.eventId, threadId }, "rejoining the run of an unfinished message");
    const rejoined = () =>
      this.turns.run(scope, source, threadId, (opts) => {
        opts.signal?.addEventListener("abort", () => stop.abort(opts.signal?.reason), { once: true });
        return events;
      });
    const job = () => this.inbox.track(scope, msg, rejoined, true);
    // With replicas the conversation's later messages wait for this one in the store (its entry is
    // still running), so it must not wait behind them in the queue.
    if (!core.options.replicas) return core.queue.push(msg.ref.key, job);
    core.inBackground(job());
    return true;
  }
}
