/**
 * Threads started from the message that addressed the bot. The conversation is keyed by the
 * thread before it exists (a thread started from a message takes that message's id), and the
 * thread is created by the first call that needs it: the typing indicator or the first reply.
 * A thread that exists already (code 160004, e.g. after a restart) is simply used. Where the bot
 * may not start threads, it answers in the channel instead, quoting the message, and says why in
 * the status.
 */
import type { REST } from "discord.js";
import { Routes } from "discord.js";
import { RecentMap } from "../kit/recent.js";
import type { ConversationRef } from "../types.js";
import { DiscordCode, discordErrorCode } from "./map-error.js";

/** Hours of quiet before Discord archives the thread: 24 h, in minutes. */
const AUTO_ARCHIVE_MINUTES = 1440;
/** Threads remembered as started; older ones are looked up again (one call, answered 160004). */
const REMEMBERED = 5000;
/** Refusals that mean "no threads here": missing access or permissions, a channel type without threads. */
const NO_THREADS = new Set<number>([DiscordCode.MissingAccess, DiscordCode.MissingPermissions, 50024]);

export class ThreadStarter {
  /** Thread id → the channel id replies go to (the thread, or the channel when it could not be started). */
  private readonly started = new RecentMap<Promise<string>>(REMEMBERED);

  constructor(
    private readonly rest: () => REST,
    private readonly fail: (err: unknown, what: string) => Error,
    private readonly warn: (message: string) => void,
  ) {}

  /** The channel id to post into for `ref`, starting its thread first when it has to. */
  target(ref: ConversationRef): Promise<string> {
    if (!ref.threadId) return Promise.resolve(ref.chatId);
    if (ref.extra?.startThread !== true) return Promise.resolve(ref.threadId);
    const threadId = ref.threadId;
    let pending = this.started.get(threadId);
    if (!pending) {
      pending = this.start(ref, threadId);
      this.started.set(threadId, pending);
      // A failure that may pass (a 429, the network) is tried again by the next call.
      pending.catch(() => this.started.delete(threadId));
    }
    return pending;
  }

  clear(): void {
    this.started.clear();
  }

  private async start(ref: ConversationRef, threadId: string): Promise<string> {
    const name = typeof ref.extra?.threadName === "string" && ref.extra.threadName ? ref.extra.threadName : "Conversation";
    try {
      await this.rest().post(Routes.threads(ref.chatId, threadId), {
        body: { name, auto_archive_duration: AUTO_ARCHIVE_MINUTES },
      });
      return threadId;
    } catch (err) {
      const code = discordErrorCode(err);
      if (code === DiscordCode.ThreadAlreadyCreated) return threadId;
      if (code !== undefined && NO_THREADS.has(code)) {
        this.warn(
          `could not start a thread in channel ${ref.chatId} (code ${code}); answering in the channel. Give the bot Create Public Threads and Send Messages in Threads there, or set thread: false`,
        );
        return ref.chatId;
      }
      throw this.fail(err, "starting a thread");
    }
  }
}
