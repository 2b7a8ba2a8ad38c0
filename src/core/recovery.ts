/**
 * After a restart (or when this replica takes over the messages of one that died): the messages
 * a previous process accepted but never finished. One never started runs now if younger than
 * `replay_window_ms`; one whose run a backend kept going (a LangGraph server) is answered from
 * that run (rejoined); the rest get a notice in their chat, so nothing a user sent ends in silence.
 */
import type { InboxEntry } from "../bindings/types.js";
import type { InboundMessage } from "../channels/types.js";
import type { CoreContext } from "./context.js";
import { leaderOf } from "./followups/group.js";
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
    const mine = entries.filter((e) => e.channel === scope.name);
    const unfinished = new Set(mine.map((e) => e.eventId));
    // A follower its leader's run took in is answered with that leader (followups/group.ts).
    const followers = new Map<string, InboxEntry[]>();
    for (const entry of mine) {
      const joined = leaderOf(entry);
      if (!joined?.taken || !unfinished.has(joined.leader)) continue;
      followers.set(joined.leader, [...(followers.get(joined.leader) ?? []), entry]);
    }
    for (const entry of mine) {
      const joined = leaderOf(entry);
      if (joined?.taken && unfinished.has(joined.leader)) continue;
      try {
        const end = await this.recoverOne(scope, entry, joined);
        for (const f of followers.get(entry.eventId) ?? []) await this.finishFollower(scope, f, entry, end);
      } catch (err) {
        unsent.push(entry);
        this.core.logger.error({ err, channel: scope.name, eventId: entry.eventId }, "could not send the restart notice");
      }
    }
    return unsent;
  }

  /**
   * One unfinished message: run again, rejoined, or told it was lost. A follower whose leader
   * finished is done with it; one only handed to a run (never taken in) counts as never started.
   */
  private async recoverOne(
    scope: ChannelScope,
    entry: InboxEntry,
    joined: { leader: string; taken: boolean } | undefined,
  ): Promise<"again" | "rejoined" | "lost" | "done"> {
    const { logger, settings } = this.core;
    if (joined?.taken) {
      await scope.store.setInboxState(entry.channel, entry.eventId, "done", `answered with ${joined.leader}`);
      return "done";
    }
    const msg = messageFromJson(entry.payload);
    const state = joined ? "received" : entry.state;
    if (state === "received" && Date.now() - entry.receivedAt <= settings.replay_window_ms) {
      // Accepted but never started: it runs now, in its conversation's order.
      logger.info({ channel: scope.name, eventId: entry.eventId }, "running a message a previous process accepted");
      if (joined) await scope.store.setInboxState(entry.channel, entry.eventId, "received");
      await this.intake.route(scope, msg);
      return "again";
    }
    if (state === "running" && (await this.rejoin(scope, msg))) return "rejoined";
    await scope.notify(msg.ref, state === "received" ? NOTICES.tooOld : NOTICES.restarted, true);
    await scope.store.setInboxState(entry.channel, entry.eventId, "failed", "interrupted by a restart");
    return "lost";
  }

  /** A follower ends as its leader did: answered by the rejoined run, covered by its notice, or run again after it. */
  private async finishFollower(scope: ChannelScope, entry: InboxEntry, leader: InboxEntry, end: string): Promise<void> {
    if (end === "again") {
      await scope.store.setInboxState(entry.channel, entry.eventId, "received");
      return this.intake.route(scope, messageFromJson(entry.payload));
    }
    const why = end === "lost" ? `interrupted by a restart with ${leader.eventId}` : `answered with ${leader.eventId}`;
    await scope.store.setInboxState(entry.channel, entry.eventId, end === "lost" ? "failed" : "done", why);
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
