/**
 * Order across replicas: a conversation starts its next message only once every message recorded
 * before it is answered. An earlier message can still be `running` when a replica died mid-reply:
 * its conversation's lease lapses, and another replica may hold the lease (and have the next
 * message) before the dead one's messages are taken over. That message is then answered first,
 * by the replica that takes it over (its rejoined reply, or the restart notice); only then does
 * the next one start. A message `running` on a live replica (one that lost its lease while alive)
 * is waited for the same way, so its reply is not overtaken either.
 *
 * A message left `running` by a fault (its state could not be written) would hold the
 * conversation forever: one older than `holdMs` since it was claimed or taken over, longer than
 * any run and its delivery may take, is passed over.
 */
import type { BindingStore, InboxEntry } from "../bindings/types.js";
import type { Logger } from "../log/logger.js";

export interface InOrderOptions {
  /** False once the caller must start nothing more here (its lease lapsed, the gateway stops). */
  going: () => boolean;
  /** How long an earlier message may stay `running` before it no longer holds the conversation. */
  holdMs: number;
  logger: Logger;
  /** Time between two looks at the store while waiting (grows from 100 ms to this). */
  pollMs?: number;
}

/**
 * The conversation's next message to start, in recorded order, once no earlier one is still being
 * answered; undefined when none waits, or when `going` turns false while waiting.
 */
export async function nextInOrder(store: BindingStore, key: string, options: InOrderOptions): Promise<InboxEntry | undefined> {
  const most = options.pollMs ?? 500;
  let told = false;
  for (let wait = Math.min(100, most); options.going(); wait = Math.min(most, wait * 2)) {
    const found = await store.nextReceived!(key);
    if (!found) return undefined;
    const holding = found.before.filter((e) => Date.now() - e.updatedAt < options.holdMs);
    if (holding.length === 0) {
      if (found.before.length > 0) {
        const stuck = found.before.map((e) => ({ eventId: e.eventId, owner: e.owner, since: e.updatedAt }));
        options.logger.warn({ key, stuck }, "an earlier message has been running too long; the conversation goes on");
      }
      return found.next;
    }
    if (!told) {
      const first = holding[0] as InboxEntry;
      options.logger.info(
        { key, channel: first.channel, eventId: first.eventId, owner: first.owner },
        "waiting for an earlier message of the conversation to be answered",
      );
      told = true;
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  return undefined;
}
