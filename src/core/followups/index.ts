/**
 * Follow-ups: what a message does that arrives while the agent still answers its conversation's
 * last one (`followups.mode`, settings.ts). `queue` leaves it to the conversation's FIFO, as
 * every message went before. The other modes act only while a turn of the conversation runs here
 * and nothing else waits in its queue (so no message ever overtakes an earlier one):
 *
 * - `collect` puts it in the conversation's bucket; the bucket is one job in the queue, and when
 *   its turn comes (and `debounce_ms` passed since the last message joined) its messages become
 *   one turn (collect.ts).
 * - `steer` hands it to the running run (`Harness.steer`); what the run did not take in before it
 *   ended runs after it as a turn of its own, before anything later (steer.ts).
 * - `interrupt` stops the running turn, as `/stop` does, and queues the message, whose turn hands
 *   the agent the stopped reply's partial text.
 *
 * A message that joins another's turn stays `running` in the inbox, noted with the event id of
 * the message that leads the turn (group.ts), until that turn ends; after a crash, recovery
 * answers the group once. With several replicas every mode queues (README.md).
 */
import type { InboundMessage } from "../../channels/types.js";
import type { FollowupSettings } from "../../config/followups.js";
import { parseCommand } from "../commands.js";
import type { CoreContext } from "../context.js";
import type { Inbox } from "../inbox.js";
import type { ChannelScope } from "../scope.js";
import { INTERRUPT_ERROR } from "./board.js";
import { Collector, type GroupHandler } from "./collect.js";
import { refuseFollowup, type Verdict } from "./group.js";
import { followupsFor } from "./settings.js";
import { Steering } from "./steer.js";

export type { GroupHandler } from "./collect.js";
export type { Verdict } from "./group.js";

export class Followups {
  readonly collector: Collector;
  readonly steering: Steering;

  constructor(
    private readonly core: CoreContext,
    inbox: Inbox,
    handleGroup: GroupHandler,
  ) {
    this.collector = new Collector(core, inbox, handleGroup);
    this.steering = new Steering(core, inbox);
  }

  /**
   * Routes a message on its way into the conversation's queue: taken as a follow-up (or refused
   * with a notice), or queued as a turn of its own with `enqueue` (false when the queue is full),
   * which runs in the same tick as the decision, so no other message can slip in between.
   */
  async route(scope: ChannelScope, msg: InboundMessage, enqueue: () => boolean): Promise<"taken" | "queued" | "full"> {
    const settings = this.candidate(msg) ? await followupsFor(this.core, scope, msg) : undefined;
    // From the decision to the queueing nothing is awaited: no other message can come between.
    const verdict = settings ? this.take(scope, msg, settings) : "queue";
    if (verdict === "taken") return "taken";
    if (verdict === "refuse") {
      await refuseFollowup(this.core, scope, msg, settings!.max_followups);
      return "taken";
    }
    // Anything queued behind an open bucket closes it: a later message must not join a turn before it.
    this.collector.seal(msg.ref.key);
    return enqueue() ? "queued" : "full";
  }

  /** Only plain messages a person typed can follow up: no click, no command, no file, no API or scheduled turn. */
  private candidate(msg: InboundMessage): boolean {
    const { core } = this;
    const key = msg.ref.key;
    if (core.options.replicas || core.holding.has(key)) return false;
    // Every mode acts only while a turn runs here or a bucket is open: otherwise the message
    // queues, and its settings need not be read (most messages, and no store read for them).
    if (!core.board.of(key) && !this.collector.isOpen(key)) return false;
    if (msg.action || msg.origin || (msg.attachments?.length ?? 0) > 0) return false;
    return msg.text.trim() !== "" && parseCommand(msg.text) === undefined;
  }

  /** What the mode does with the message, decided at once: taken, refused (over the cap), or queued. */
  private take(scope: ChannelScope, msg: InboundMessage, settings: FollowupSettings): Verdict {
    switch (settings.mode) {
      case "queue":
        return "queue";
      case "collect":
        return this.collector.offer(scope, msg, settings);
      case "steer":
        return this.steering.offer(scope, msg, settings.max_followups);
      case "interrupt":
        this.interrupt(msg.ref.key);
        return "queue";
    }
  }

  /** Stops the conversation's running turn for the message that just came; its partial goes to the next turn. */
  private interrupt(key: string): void {
    const { core } = this;
    const turn = core.board.of(key);
    if (!turn || turn.closed || core.queue.waiting(key) > 0) return;
    turn.closed = true;
    turn.interrupted = true;
    turn.controller.abort(new DOMException("a new message interrupted the reply", INTERRUPT_ERROR));
  }
}
