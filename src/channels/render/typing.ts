/**
 * The typing indicator shown until the first text is visible. Platforms expire it after a few
 * seconds, so it is repeated every `typingIntervalMs`. It is decoration: failures are logged
 * and ignored, though a 429 still closes the gate so no other call breaks the platform's wait.
 */
import type { Logger } from "../../log/logger.js";
import type { Channel, ConversationRef } from "../types.js";
import type { Outbound } from "./outbound.js";

const DEFAULT_TYPING_INTERVAL_MS = 4000;

export class TypingLoop {
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly channel: Channel,
    private readonly ref: ConversationRef,
    private readonly logger: Logger,
    private readonly out: Outbound,
  ) {}

  start(): void {
    if (!this.channel.typing || this.started) return;
    this.started = true;
    this.tick();
  }

  /** Stops repeating and clears the indicator where the platform needs that. Idempotent. */
  stop(): Promise<void> {
    this.stopped ??= this.clear();
    return this.stopped;
  }

  private tick(): void {
    if (this.stopped) return;
    // During a platform's retry_after even decoration must wait; skip this beat.
    if (this.out.blockedFor() === 0) {
      this.channel.typing?.(this.ref).catch((err: unknown) => {
        this.out.noteFailure(err, false);
        this.logger.debug({ err, chat: this.ref.chatId }, "typing indicator failed");
      });
    }
    const interval = this.channel.capabilities.typingIntervalMs ?? DEFAULT_TYPING_INTERVAL_MS;
    this.timer = setTimeout(() => this.tick(), interval);
  }

  private async clear(): Promise<void> {
    clearTimeout(this.timer);
    if (!this.started || !this.channel.typingDone) return;
    try {
      await this.out.waitReady(false);
      await this.channel.typingDone(this.ref);
    } catch (err) {
      this.out.noteFailure(err, false);
      this.logger.debug({ err, chat: this.ref.chatId }, "clearing the typing indicator failed");
    }
  }
}
