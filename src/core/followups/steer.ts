/**
 * Follow-up mode `steer`: a message that arrives while a turn runs goes to its run
 * (`Harness.steer`), which reads it before its next model call, so the one reply answers it
 * too. What the run did not take in before it ended (it was writing its last answer, it asked a
 * question, it was stopped) runs after it as a turn of its own, before anything that came later.
 */
import type { InboundMessage } from "../../channels/types.js";
import type { CoreContext } from "../context.js";
import type { Inbox } from "../inbox.js";
import type { ChannelScope } from "../scope.js";
import type { BoardTurn } from "./board.js";
import { finishFollower, joinedNote, steeredId, type Verdict } from "./group.js";

/** How the turn ended: answered (its errors shown in the chat), failed, or left to the next process (stopping). */
export type TurnEnd = "ok" | "failed" | "left";

/** Handles a message as a turn of its own (Messages.handle). */
export type MessageHandler = (scope: ChannelScope, msg: InboundMessage) => Promise<void>;

export class Steering {
  /** Per conversation: missed messages that still wait to run after the one running now. */
  private readonly missedAhead = new Map<string, number>();

  constructor(
    private readonly core: CoreContext,
    private readonly inbox: Inbox,
  ) {}

  /** Hands `msg` to the conversation's running turn: `queue` when there is none it can join, `refuse` past the cap. */
  offer(scope: ChannelScope, msg: InboundMessage, max: number): Verdict {
    const { core } = this;
    const turn = core.board.of(msg.ref.key);
    const steer = turn?.harness.steer?.bind(turn.harness);
    // Missed messages run inside the turn's queue job, not in the queue: one still waiting to run
    // counts as waiting too, or a new message would steer into an earlier missed one's turn and overtake the rest.
    const ahead = core.queue.waiting(msg.ref.key) + (this.missedAhead.get(msg.ref.key) ?? 0);
    if (!turn || !steer || turn.closed || ahead > 0) return "queue";
    if (turn.steered.length >= max) return "refuse";
    // Joined at once: the turn's end sees every message that joined it.
    const outcome = (async () => {
      const { name, store } = scope;
      await store.setInboxState(name, msg.eventId, "running", joinedNote(turn.leader, false));
      const result = await steer(turn.threadId, msg.text, { id: steeredId(name, msg.eventId) });
      // Taken in: after a crash it is answered with its leader; until then it would run again on its own.
      if (result === "taken") await store.setInboxState(name, msg.eventId, "running", joinedNote(turn.leader));
      return result;
    })();
    turn.steered.push({ msg, outcome });
    return "taken";
  }

  /**
   * The turn ended: what its run took in is finished with it (left as it is for the next process
   * when the turn was), and what it missed runs now, in order, each as a turn of its own.
   */
  async settle(scope: ChannelScope, turn: BoardTurn, end: TurnEnd, handle: MessageHandler): Promise<void> {
    turn.closed = true;
    const missed: InboundMessage[] = [];
    for (const { msg, outcome } of turn.steered) {
      const result = await outcome.catch((err: unknown) => {
        this.core.logger.warn({ err, channel: scope.name, key: turn.key }, "could not steer a message into the run");
        return "missed" as const;
      });
      // Left to the next process: recovery answers it with its leader.
      if (result === "taken" && end !== "left") await finishFollower(scope, msg, turn.leader, end === "ok");
      else if (result === "missed") missed.push(msg);
    }
    try {
      for (const [i, msg] of missed.entries()) {
        this.missedAhead.set(turn.key, missed.length - 1 - i);
        // Stopping: the message waits for the next process.
        if (!this.core.accepting) await scope.store.setInboxState(scope.name, msg.eventId, "received");
        else await this.inbox.track(scope, msg, () => handle(scope, msg), true);
      }
    } finally {
      if (missed.length > 0) this.missedAhead.delete(turn.key);
    }
  }
}
