/**
 * Follow-up mode `collect`: messages that arrive while a turn runs go into the conversation's
 * bucket, which waits in the queue as one job. When its turn comes, and once `debounce_ms`
 * passed without another message joining, the bucket closes and its messages become one turn:
 * the agent reads them as one user message that lists each, in the order they were sent.
 */
import type { InboundMessage } from "../../channels/types.js";
import type { FollowupSettings } from "../../config/followups.js";
import type { CoreContext } from "../context.js";
import type { Inbox } from "../inbox.js";
import type { ChannelScope } from "../scope.js";
import { trackGroup, type Verdict } from "./group.js";

/** Handles the messages of a closed bucket as one turn (Messages.handleGroup). */
export type GroupHandler = (scope: ChannelScope, msgs: InboundMessage[]) => Promise<void>;

interface Bucket {
  key: string;
  msgs: InboundMessage[];
  lastAt: number;
  /** Something was queued behind it, or it closed: nothing joins it any more. */
  sealed: boolean;
  wake?: () => void;
}

export class Collector {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly core: CoreContext,
    private readonly inbox: Inbox,
    private readonly handleGroup: GroupHandler,
  ) {}

  /**
   * Puts `msg` in its conversation's open bucket, opening one behind the running turn if none is
   * open. `queue` when no turn runs (or something else waits first): the message is a turn of its
   * own; `refuse` when the bucket is full.
   */
  offer(scope: ChannelScope, msg: InboundMessage, settings: FollowupSettings): Verdict {
    const { core } = this;
    const key = msg.ref.key;
    let bucket = this.buckets.get(key);
    if (!bucket || bucket.sealed) {
      if (!core.board.of(key) || core.queue.waiting(key) > 0) return "queue";
      const opened: Bucket = { key, msgs: [], lastAt: 0, sealed: false };
      if (!core.queue.push(key, () => this.close(scope, opened, settings.debounce_ms))) return "queue";
      this.buckets.set(key, opened);
      bucket = opened;
    }
    if (bucket.msgs.length >= settings.max_followups) return "refuse";
    bucket.msgs.push(msg);
    bucket.lastAt = Date.now();
    bucket.wake?.();
    return "taken";
  }

  /** Whether the conversation has a bucket messages may still join. */
  isOpen(key: string): boolean {
    return this.buckets.has(key);
  }

  /** Nothing joins the conversation's open bucket any more (something was queued behind it). */
  seal(key: string): void {
    const bucket = this.buckets.get(key);
    if (!bucket) return;
    bucket.sealed = true;
    this.buckets.delete(key);
  }

  /** The bucket's turn: waits out the debounce, closes it and answers its messages as one turn. */
  private async close(scope: ChannelScope, bucket: Bucket, debounceMs: number): Promise<void> {
    const { core } = this;
    for (;;) {
      const wait = bucket.lastAt + debounceMs - Date.now();
      if (wait <= 0 || !core.accepting) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, wait);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        bucket.wake = done;
      });
    }
    this.seal(bucket.key);
    // Stopping: the messages stay `received`, and the next process answers them.
    if (!core.accepting) return;
    await trackGroup(this.inbox, scope, bucket.msgs, () => this.handleGroup(scope, bucket.msgs));
  }
}

/**
 * The one message a closed bucket becomes: the first message's id and sender (its turn's tag),
 * the last one's place in the chat (the reply follows it), and a text that lists each message.
 */
export function collectedMessage(msgs: InboundMessage[]): InboundMessage {
  const first = msgs[0]!;
  if (msgs.length === 1) return first;
  const last = msgs.at(-1)!;
  const senders = new Set(msgs.map((m) => m.user.id));
  const lines = msgs.map((m, i) => {
    const who = senders.size > 1 ? `${m.user.name ?? m.user.id}: ` : "";
    return `${i + 1}. ${who}${m.text.trim()}`;
  });
  const text = [`(${msgs.length} messages, sent one after another while you were answering:)`, ...lines].join("\n");
  return { ...first, ref: last.ref, text };
}
