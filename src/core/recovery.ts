/**
 * After a restart (or when this replica takes over the messages of one that died): the messages
 * a previous process accepted but never finished. One never started runs now if younger than
 * `replay_window_ms`; one whose run a backend kept going (a LangGraph server) is answered from
 * that run (rejoined); the rest get a notice in their chat, so nothing a user sent ends in silence.
 */
import type { InboxEntry } from "../bindings/types.js";
import type { InboundMessage } from "../channels/types.js";
import type { CoreContext } from "./context.js";
import { leaderOf, steeredId } from "./followups/group.js";
import type { Inbox } from "./inbox.js";
import type { Intake } from "./intake.js";
import { NOTICES } from "./notices.js";
import type { RecoveryHold } from "./recovery-hold.js";
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

  /**
   * Answers `entries` of the scope's channel; resolves to those whose notice could not be sent
   * (tried again later). With a `hold` (a single process starting), each conversation's entries
   * are answered in the place the hold kept at the front of its queue, conversations side by side.
   */
  async recover(scope: ChannelScope, entries: InboxEntry[], hold?: RecoveryHold): Promise<InboxEntry[]> {
    const mine = entries.filter((e) => e.channel === scope.name);
    if (!hold) return this.recoverAll(scope, mine, false);
    const byKey = new Map<string, InboxEntry[]>();
    for (const e of mine) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e]);
    const unsent: InboxEntry[] = [];
    await Promise.all(
      [...byKey].map(([key, list]) => hold.run(key, async () => void unsent.push(...(await this.recoverAll(scope, list, true))))),
    );
    hold.release();
    return unsent;
  }

  /** `mine`, oldest first; `inline`: answered here and now (in a held place), not queued. */
  private async recoverAll(scope: ChannelScope, mine: InboxEntry[], inline: boolean): Promise<InboxEntry[]> {
    const unsent: InboxEntry[] = [];
    const unfinished = new Set(mine.map((e) => e.eventId));
    // A follower its leader's run took in is answered with that leader (followups/group.ts).
    const followers = new Map<string, InboxEntry[]>();
    const joins = new Map<string, { leader: string; taken: boolean }>();
    for (const entry of mine) {
      const joined = await this.joinOf(scope, entry);
      if (joined) joins.set(entry.eventId, joined);
      if (!joined?.taken || !unfinished.has(joined.leader)) continue;
      followers.set(joined.leader, [...(followers.get(joined.leader) ?? []), entry]);
    }
    for (const entry of mine) {
      const joined = joins.get(entry.eventId);
      if (joined?.taken && unfinished.has(joined.leader)) continue;
      try {
        const end = await this.recoverOne(scope, entry, joined, inline);
        for (const f of followers.get(entry.eventId) ?? []) await this.finishFollower(scope, f, entry, end, inline);
      } catch (err) {
        unsent.push(entry);
        this.core.logger.error({ err, channel: scope.name, eventId: entry.eventId }, "could not send the restart notice");
      }
    }
    return unsent;
  }

  /**
   * The turn an unfinished entry joined. One only handed to a run (steered, not confirmed) counts
   * as taken in when the thread holds it: the crash came between the two.
   */
  private async joinOf(scope: ChannelScope, entry: InboxEntry): Promise<{ leader: string; taken: boolean } | undefined> {
    const joined = leaderOf(entry);
    if (!joined || joined.taken) return joined;
    const inThread = await this.threadHolds(scope, entry.key, steeredId(scope.name, entry.eventId)).catch((err: unknown) => {
      this.core.logger.warn(
        { err, channel: scope.name, eventId: entry.eventId },
        "could not read the thread of a steered message",
      );
      return false;
    });
    return inThread ? { ...joined, taken: true } : joined;
  }

  /** Whether the conversation's current thread holds a message with this id. */
  private async threadHolds(scope: ChannelScope, key: string, id: string): Promise<boolean> {
    const binding = await scope.store.currentBinding(key);
    if (!binding || !(await this.core.conversations.servesThread(scope, key, binding.threadId))) return false;
    const harness = await this.core.conversations.harnessOfThread(scope, key, binding.threadId);
    return (await harness.history?.(binding.threadId))?.some((m) => m.id === id) ?? false;
  }

  /**
   * One unfinished message: run again, rejoined, or told it was lost. A follower whose leader
   * finished is done with it; one only handed to a run (never taken in) counts as never started.
   */
  private async recoverOne(
    scope: ChannelScope,
    entry: InboxEntry,
    joined: { leader: string; taken: boolean } | undefined,
    inline: boolean,
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
      await this.answer(scope, msg, inline);
      return "again";
    }
    if (state === "running" && (await this.rejoin(scope, msg, inline))) return "rejoined";
    await scope.notify(msg.ref, state === "received" ? NOTICES.tooOld : NOTICES.restarted, true);
    await scope.store.setInboxState(entry.channel, entry.eventId, "failed", "interrupted by a restart");
    return "lost";
  }

  /** A follower ends as its leader did: answered by the rejoined run, covered by its notice, or run again after it. */
  private async finishFollower(
    scope: ChannelScope,
    entry: InboxEntry,
    leader: InboxEntry,
    end: string,
    inline: boolean,
  ): Promise<void> {
    if (end === "again") {
      await scope.store.setInboxState(entry.channel, entry.eventId, "received");
      return this.answer(scope, messageFromJson(entry.payload), inline);
    }
    const why = end === "lost" ? `interrupted by a restart with ${leader.eventId}` : `answered with ${leader.eventId}`;
    await scope.store.setInboxState(entry.channel, entry.eventId, end === "lost" ? "failed" : "done", why);
  }

  /** A message that never started: answered here (in its held place), or routed into its queue. */
  private answer(scope: ChannelScope, msg: InboundMessage, inline: boolean): Promise<void> {
    return inline ? this.intake.answerNow(scope, msg) : this.intake.route(scope, msg);
  }

  /**
   * Renders (`inline`) or queues the rendering of the run a previous process started for `msg`, if the backend still
   * has it; false when there is none (or it cannot be looked up), and the message is lost.
   */
  private async rejoin(scope: ChannelScope, msg: InboundMessage, inline: boolean): Promise<boolean> {
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
    if (inline) return job().then(() => true);
    // With replicas the conversation's later messages wait for this one in the store (its entry is
    // still running), so it must not wait behind them in the queue.
    if (!core.options.replicas) return core.queue.push(msg.ref.key, job);
    core.inBackground(job());
    return true;
  }
}
