/**
 * The inbox: every message is recorded before the platform is acked (a redelivery then finds it
 * and is dropped as a duplicate), marked running while it is answered and done or failed after,
 * and, with several replicas, claimed by exactly one of them and answered in the order the store
 * recorded the conversation's messages (`drain`). What a stopping gateway leaves unfinished stays
 * in the inbox for the next process (see recovery.ts).
 */
import type { BindingStore } from "../bindings/types.js";
import type { InboundMessage } from "../channels/types.js";
import { AntlerError, errorMessage } from "../errors.js";
import type { CoreContext } from "./context.js";
import { nextInOrder } from "./in-order.js";
import { NOTICES } from "./notices.js";
import type { ChannelScope } from "./scope.js";
import { messageFromJson, messageToJson } from "./stored.js";

/**
 * A message the stopping gateway leaves to the next process, with the inbox state that says how:
 * `received` (never started: it is run again) or `running` (its run goes on on the backend and
 * is rejoined).
 */
export class LeftForNextProcess extends Error {
  constructor(readonly state: "received" | "running") {
    super(`left to the next process (${state})`);
  }
}

/**
 * A message whose handling failed after the chat was told so (a scheduled turn's error, shown
 * where its reply would be): the entry is marked failed without a second notice.
 */
export class ReportedFailure extends Error {
  constructor(readonly code: string) {
    super(`the turn ended with an error (${code}); the chat was told`);
  }
}

/** Answers a message that is this replica's to answer now (its verdict, then its handling). */
export type AnswerNow = (scope: ChannelScope, msg: InboundMessage) => Promise<void>;

export class Inbox {
  constructor(private readonly core: CoreContext) {}

  /** Records `msg`; false when it was recorded before (a redelivery). */
  record(scope: ChannelScope, msg: InboundMessage): Promise<boolean> {
    return scope.store.recordInbound({
      channel: scope.name,
      eventId: msg.eventId,
      key: msg.ref.key,
      payload: messageToJson(msg),
    });
  }

  /** Marks a message finished without a run (ignored, refused), with why. */
  async finish(scope: ChannelScope, msg: InboundMessage, state: "done" | "failed", why: string): Promise<void> {
    await scope.store.setInboxState(scope.name, msg.eventId, state, why);
  }

  /**
   * Takes a recorded message for handling: with one process it is ours already; with several
   * replicas it is ours only if no other replica took it first (false: leave it alone).
   */
  async take(scope: ChannelScope, msg: InboundMessage): Promise<boolean> {
    if (!this.shared(scope.store)) return true;
    return scope.store.claimInbound!(scope.name, msg.eventId);
  }

  /** Several replicas share the store: a message is ours only once claimed (which also marks it running). */
  private shared(store: BindingStore): boolean {
    return this.core.options.replicas !== undefined && store.claimInbound !== undefined;
  }

  /**
   * Marks the inbox entry running → done/failed around `work`; a failure gets a notice in the chat.
   * `taken`: the entry is this replica's already (taken over while running), so it is not claimed.
   */
  async track(scope: ChannelScope, msg: InboundMessage, work: () => Promise<void>, taken = false): Promise<void> {
    const { store, name } = scope;
    // Stopping: a message not started yet stays `received` for the next process.
    if (!this.core.accepting) return;
    // Another replica took it first (it received it too late, or took it over): theirs to answer.
    if (!taken && !(await this.take(scope, msg))) return;
    if (!this.shared(store)) await store.setInboxState(name, msg.eventId, "running");
    try {
      await work();
      await store.setInboxState(name, msg.eventId, "done");
    } catch (err) {
      if (err instanceof LeftForNextProcess) {
        if (err.state === "received") await store.setInboxState(name, msg.eventId, "received");
        this.core.logger.info({ channel: name, eventId: msg.eventId, state: err.state }, "left to the next process");
        return;
      }
      if (err instanceof ReportedFailure) return void (await store.setInboxState(name, msg.eventId, "failed", err.message));
      this.core.logger.error({ err, channel: name, key: msg.ref.key }, "message handling failed");
      scope.noteError(err);
      await store.setInboxState(name, msg.eventId, "failed", errorMessage(err));
      await scope.notify(msg.ref, NOTICES.failed);
    }
  }

  /**
   * With several replicas: under the conversation's lease, answers its waiting messages in the
   * order they were recorded, also those another replica received (its own job then finds
   * nothing left). A drain that fails is tried again, so no recorded message is left waiting.
   */
  async drain(scope: ChannelScope, key: string, answer: AnswerNow, attempt = 0): Promise<void> {
    const { store, tenant } = scope;
    const { core } = this;
    const replicas = core.options.replicas;
    if (!replicas || !store.nextReceived || !core.accepting) return;
    try {
      const leaseLost = await replicas.withConversation(tenant, key, async (lost) => {
        // A lease that lapsed (the database was unreachable) or was taken: start nothing new here.
        const going = () => core.accepting && !lost.aborted;
        // A message still running before the next (its replica died mid-reply) is answered first.
        const holdMs = core.settings.run_timeout_ms + core.settings.delivery_retry_ms;
        const next = () => (going() ? nextInOrder(store, key, { going, holdMs, logger: core.logger }) : undefined);
        for (let entry = await next(); entry; entry = await next()) await answer(scope, messageFromJson(entry.payload));
        return lost.aborted;
      });
      // What is left waits for whoever holds the lease now, or for this replica once it has it again.
      if (leaseLost) throw new AntlerError("lease_lost", "the conversation's lease lapsed while its messages ran");
    } catch (err) {
      core.logger.error({ err, channel: scope.name, key, attempt }, "could not run a conversation's messages; trying again");
      await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 500 * 2 ** attempt)));
      if (core.accepting) core.inBackground(this.drain(scope, key, answer, attempt + 1));
    }
  }
}
