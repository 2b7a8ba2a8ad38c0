/**
 * getUpdates long polls, as Telegram serves them to a bot with more than one process: one poll
 * may be open per bot. A new getUpdates ends the one still open with 409 "Conflict: terminated
 * by other getUpdates request; …" and is served itself, so two processes polling one token keep
 * knocking each other out. Every conflict is recorded, and every poll names the client (the
 * listener it came through, see `FakeTelegram.listenFor`), so a test can tell who polled when.
 */
import type { IncomingMessage } from "node:http";
import { ApiError } from "./api.js";
import type { Update, UpdateQueue } from "./updates.js";

export const CONFLICT_DESCRIPTION =
  "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running";

export interface PollConflict {
  at: number;
  /** Client of the poll that got the 409. */
  terminated: string;
  /** Client of the newer poll that ended it. */
  by: string;
}

interface OpenPoll {
  client: string;
  req: IncomingMessage;
  /** Ends the poll with the 409 (it wakes from its wait at once). */
  terminate(by: string): void;
}

export class LongPolls {
  readonly conflicts: PollConflict[] = [];
  private open: OpenPoll | undefined;

  constructor(private readonly updates: UpdateQueue) {}

  /** Serves one getUpdates: confirms below `offset`, then waits up to `timeout` s for updates. */
  async serve(params: Record<string, unknown>, req: IncomingMessage, client: string, closed: () => boolean): Promise<Update[]> {
    const offset = Number(params.offset ?? 0);
    const limit = Math.min(100, Number(params.limit ?? 100));
    const deadline = Date.now() + Number(params.timeout ?? 0) * 1000;
    let gone = false;
    let terminatedBy: string | undefined;
    const onClose = () => {
      gone = true;
    };
    // A keep-alive socket carries many polls: each takes its listener off again.
    req.socket.once("close", onClose);
    const self: OpenPoll = {
      client,
      req,
      terminate: (by) => {
        terminatedBy = by;
        this.updates.wake();
      },
    };
    this.takeOver(self);
    try {
      for (;;) {
        if (terminatedBy !== undefined) throw new ApiError(409, CONFLICT_DESCRIPTION);
        if (gone) return [];
        const batch = this.updates.take(offset, limit);
        if (batch.length > 0 || closed() || Date.now() >= deadline) return batch;
        await this.updates.wait(Math.min(250, deadline - Date.now()));
      }
    } finally {
      req.socket.off("close", onClose);
      if (this.open === self) this.open = undefined;
    }
  }

  /** The newer poll wins: a poll still open (its client still connected) ends with the 409. */
  private takeOver(next: OpenPoll): void {
    const old = this.open;
    this.open = next;
    if (!old || old.req.socket.destroyed) return;
    this.conflicts.push({ at: Date.now(), terminated: old.client, by: next.client });
    old.terminate(next.client);
  }
}
