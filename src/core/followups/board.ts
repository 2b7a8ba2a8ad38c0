/**
 * The turns running now, one per conversation at most, as the follow-up modes see them: what a
 * new message may steer into, collect behind or interrupt. A turn is on the board from when its
 * message found its thread until its handling ended; the board also keeps, per conversation, the
 * partial reply of a turn a new message interrupted, for the next turn to hand the agent.
 */
import type { InboundMessage } from "../../channels/types.js";
import type { Harness, RunEvent } from "../../harness/types.js";

/** A message steered into a running turn, and what became of it. */
export interface Steered {
  msg: InboundMessage;
  /** `taken`: the run read it, so its reply answers it; `missed`: it runs as a turn of its own. */
  outcome: Promise<"taken" | "missed">;
}

/** One conversation's turn in progress. */
export interface BoardTurn {
  key: string;
  /** The event id of the message that started it: the one its followers are recorded as joining. */
  leader: string;
  controller: AbortController;
  harness: Harness;
  threadId: string;
  /** Messages steered into it, in the order they came. */
  steered: Steered[];
  /** No message joins it any more: its run ended, `/stop` stopped it, or a message interrupted it. */
  closed: boolean;
  /** The reply text the run streamed so far. */
  partial: string;
  /** A new message interrupted it: its partial goes to the next turn. */
  interrupted: boolean;
}

/** The name an interrupting message's abort reason carries (see harness/run-errors.ts). */
export const INTERRUPT_ERROR = "InterruptError";

export class TurnBoard {
  private readonly turns = new Map<string, BoardTurn>();
  private readonly partials = new Map<string, string>();

  /** Puts a turn on the board; a turn of the same conversation still there is replaced (a nested turn). */
  begin(msg: InboundMessage, controller: AbortController, harness: Harness, threadId: string): BoardTurn {
    const turn: BoardTurn = {
      key: msg.ref.key,
      leader: msg.eventId,
      controller,
      harness,
      threadId,
      steered: [],
      closed: false,
      partial: "",
      interrupted: false,
    };
    this.turns.set(turn.key, turn);
    return turn;
  }

  /** Takes the turn off the board (if it is still the one there). */
  end(turn: BoardTurn): void {
    turn.closed = true;
    if (this.turns.get(turn.key) === turn) this.turns.delete(turn.key);
    if (turn.interrupted && turn.partial.trim()) this.partials.set(turn.key, turn.partial);
  }

  /** The conversation's turn, if one is running here. */
  of(key: string): BoardTurn | undefined {
    return this.turns.get(key);
  }

  /** The turn that streams under `controller`, for the renderer's tap on its text. */
  byController(key: string, controller: AbortController): BoardTurn | undefined {
    const turn = this.turns.get(key);
    return turn?.controller === controller ? turn : undefined;
  }

  /** The partial reply a new message interrupted in this conversation, once: the next turn takes it. */
  takeInterrupted(key: string): string | undefined {
    const partial = this.partials.get(key);
    this.partials.delete(key);
    return partial;
  }

  /** Stops the conversation's turn from taking any further message (`/stop`). */
  close(key: string): void {
    const turn = this.turns.get(key);
    if (turn) turn.closed = true;
  }
}

/** The run's events as they pass, with their reply text kept as the turn's partial (for `interrupt`). */
export async function* tapPartial(events: AsyncIterable<RunEvent>, turn: BoardTurn | undefined): AsyncIterable<RunEvent> {
  for await (const event of events) {
    if (turn && event.type === "text") turn.partial += event.delta;
    yield event;
  }
}
