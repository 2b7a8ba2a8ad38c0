/**
 * The typing indicator shown until the first text is visible. Platforms expire it after a few
 * seconds, so it is repeated every `typingIntervalMs`. It is decoration: failures are logged
 * and ignored, though a 429 still closes the gate so no other call breaks the platform's wait.
 *
 * It starts when the message is accepted, also while the message waits for a run slot, and it
 * first shows after `delayMs`: a reply whose first words arrive sooner needs no indicator, and
 * skipping it saves a platform call per reply.
 */

import type { Channel, ConversationRef } from "../../channels/types.js";
import type { Logger } from "../../log/logger.js";
import { withinCallLimit } from "./call-limit.js";
import type { Outbound } from "./outbound.js";

/** The part of a run's Outbound the indicator respects: a 429's wait, and failure notes. */
export type TypingGate = Pick<Outbound, "blockedFor" | "noteFailure" | "waitReady">;

const DEFAULT_TYPING_INTERVAL_MS = 4000;

export class TypingLoop {
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private shown = false;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly channel: Channel,
    private readonly ref: ConversationRef,
    private readonly logger: Logger,
    private out?: TypingGate,
  ) {}

  /** Shows the indicator after `delayMs` (at once for 0), then repeats it until `stop`. */
  start(delayMs = 0): void {
    if (!this.channel.typing || this.started || this.stopped) return;
    this.started = true;
    if (delayMs > 0) this.timer = setTimeout(() => this.tick(), delayMs);
    else this.tick();
  }

  /** The run's Outbound, once it has one: from then on a 429 on the conversation pauses the indicator too. */
  useGate(out: TypingGate): void {
    this.out = out;
  }

  /** Stops repeating and clears the indicator where the platform needs that. Idempotent. */
  stop(): Promise<void> {
    this.stopped ??= this.clear();
    return this.stopped;
  }

  private tick(): void {
    if (this.stopped) return;
    // During a platform's retry_after even decoration must wait; skip this beat.
    if ((this.out?.blockedFor() ?? 0) === 0) {
      this.shown = true;
      this.channel.typing?.(this.ref).catch((err: unknown) => {
        this.out?.noteFailure(err, false);
        this.logger.debug({ err, chat: this.ref.chatId }, "typing indicator failed");
      });
    }
    const interval = this.channel.capabilities.typingIntervalMs ?? DEFAULT_TYPING_INTERVAL_MS;
    this.timer = setTimeout(() => this.tick(), interval);
  }

  private async clear(): Promise<void> {
    clearTimeout(this.timer);
    if (!this.shown || !this.channel.typingDone) return;
    try {
      await this.out?.waitReady(false);
      await withinCallLimit(this.channel.name, "clearing the typing indicator", this.channel.typingDone(this.ref));
    } catch (err) {
      this.out?.noteFailure(err, false);
      this.logger.debug({ err, chat: this.ref.chatId }, "clearing the typing indicator failed");
    }
  }
}
