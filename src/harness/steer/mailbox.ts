/**
 * Steer mailboxes (follow-up mode `steer`): the messages a person sends into a thread's running
 * turn, held until the run takes them in at its next step boundary, or handed back as `missed`
 * when the run ends first. One `SteerRun` per run; `SteerMailbox` finds the thread's.
 */
import { randomUUID } from "node:crypto";
import type { RunEvent } from "../types.js";

/** What became of a steered message: in the running turn, or left for a turn of its own. */
export type SteerOutcome = "taken" | "missed";

/** A steered message: its text and the id it takes in the thread. */
export interface SteeredText {
  text: string;
  id: string;
}

interface Letter extends SteeredText {
  resolve(outcome: SteerOutcome): void;
}

/** The steered messages of one run, in the order they were given. */
export class SteerRun {
  #waiting: Letter[] = [];
  /** Handed to the backend, not yet confirmed in the thread. */
  #handed: Letter[] = [];
  #closed = false;
  #arrived: Array<() => void> = [];

  /** How many messages wait to be taken. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** False once the run ended: a message given then is missed at once. */
  get open(): boolean {
    return !this.#closed;
  }

  /** Adds a message; the promise says whether the run took it. */
  add(text: string, id: string): Promise<SteerOutcome> {
    if (this.#closed) return Promise.resolve("missed");
    return new Promise((resolve) => {
      this.#waiting.push({ text, id, resolve });
      for (const wake of this.#arrived.splice(0)) wake();
    });
  }

  /** Resolves when the next message is added (or the run closes). */
  arrival(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#arrived.push(resolve));
  }

  /**
   * Hands every waiting message over, oldest first. Each is settled later: `confirm` once it is
   * in the thread, `putBack` when it could not go in; `close` misses what is still handed over.
   */
  take(): SteeredText[] {
    const taken = this.#waiting.splice(0);
    this.#handed.push(...taken);
    return taken.map(({ text, id }) => ({ text, id }));
  }

  /** The handed-over messages are in the thread: they are `taken`. */
  confirm(): void {
    for (const letter of this.#handed.splice(0)) letter.resolve("taken");
  }

  /** The handed-over messages did not go in: they wait again, ahead of newer ones. */
  putBack(): void {
    this.#waiting.unshift(...this.#handed.splice(0));
  }

  /** The run ended: every message not yet taken is `missed`. */
  close(): void {
    this.#closed = true;
    for (const letter of [...this.#handed.splice(0), ...this.#waiting.splice(0)]) letter.resolve("missed");
    for (const wake of this.#arrived.splice(0)) wake();
  }
}

const isClosing = (e: RunEvent) => e.type === "done" || e.type === "clarification" || e.type === "error";

/** The steer runs of a harness's threads; a harness holds one. */
export class SteerMailbox {
  readonly #runs = new Map<string, SteerRun>();

  /** Adds `text` to the thread's running turn, as a message with `id` (a new one by default); `missed` at once when no run is going. */
  steer(threadId: string, text: string, id: string = randomUUID()): Promise<SteerOutcome> {
    return this.#runs.get(threadId)?.add(text, id) ?? Promise.resolve("missed");
  }

  /**
   * Streams `body` as the thread's run with a steer run of its own. Messages not taken are
   * `missed` before the closing event goes out, so a caller that has the closing event knows
   * the outcome of every message it steered into the run.
   */
  async *during(threadId: string, body: (steer: SteerRun) => AsyncIterable<RunEvent>): AsyncGenerator<RunEvent> {
    const steer = new SteerRun();
    this.#runs.set(threadId, steer);
    const end = () => {
      steer.close();
      if (this.#runs.get(threadId) === steer) this.#runs.delete(threadId);
    };
    try {
      for await (const event of body(steer)) {
        if (isClosing(event)) end();
        yield event;
      }
    } finally {
      end();
    }
  }
}
