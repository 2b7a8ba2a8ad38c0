/**
 * Which Gateway sessions get which event, and in what form. Guild messages need GuildMessages,
 * DMs need DirectMessages, threads need Guilds; interactions reach every session. Without the
 * MessageContent intent a guild message's content and components arrive empty, unless the bot
 * wrote it or is mentioned in it (DMs always carry content), as on Discord.
 */
import { type EventRecord, type Gateway, Intent } from "./gateway.js";
import type { FakeChannel, Json, StoredMessage, World } from "./world.js";

/** A user-side event, kept so it can be dispatched again as it was. */
export interface UserEvent {
  t: string;
  key: string;
  build: (intents: number) => unknown;
  record: EventRecord;
}

export class Events {
  /** Events the user side caused (messages, clicks, commands), oldest first. */
  readonly userEvents: UserEvent[] = [];

  constructor(
    private readonly world: World,
    private readonly gateway: Gateway,
  ) {}

  /** Whether a session with these intents reads the content of `m`. */
  contentFor(m: StoredMessage, intents: number): boolean {
    if (!m.guildId || m.author.id === this.world.bot.id) return true;
    if (m.mentions.some((u) => u.id === this.world.bot.id)) return true;
    return (intents & Intent.MessageContent) !== 0;
  }

  private messageBuilder(m: StoredMessage): (intents: number) => Json | undefined {
    const need = m.guildId ? Intent.GuildMessages : Intent.DirectMessages;
    // Built once, so a redelivery carries the same payload (an edit later does not change it).
    const full = this.world.messageJson(m, { gateway: true });
    const bare = this.world.messageJson(m, { gateway: true, withContent: false });
    return (intents) => ((intents & need) === 0 ? undefined : this.contentFor(m, intents) ? full : bare);
  }

  /** MESSAGE_CREATE or MESSAGE_UPDATE for a message; a user's message is kept for redelivery. */
  message(t: "MESSAGE_CREATE" | "MESSAGE_UPDATE", m: StoredMessage, fromUser = false): UserEvent {
    const build = this.messageBuilder(m);
    return this.send(t, `${t}:${m.id}`, build, fromUser);
  }

  messageDelete(m: StoredMessage): void {
    const need = m.guildId ? Intent.GuildMessages : Intent.DirectMessages;
    const d = { id: m.id, channel_id: m.channelId, ...(m.guildId ? { guild_id: m.guildId } : {}) };
    this.gateway.dispatch("MESSAGE_DELETE", (intents) => ((intents & need) === 0 ? undefined : d));
  }

  threadCreate(thread: FakeChannel, fromUser: boolean): UserEvent {
    const d = { ...this.world.channelJson(thread), newly_created: true };
    return this.send("THREAD_CREATE", `THREAD_CREATE:${thread.id}`, (i) => ((i & Intent.Guilds) === 0 ? undefined : d), fromUser);
  }

  interaction(d: Json): UserEvent {
    return this.send("INTERACTION_CREATE", `INTERACTION_CREATE:${String(d.id)}`, () => d, true);
  }

  /** Dispatches a user event again with the same payload (a new `s`, as a replay would carry). */
  redeliver(event: UserEvent): void {
    this.gateway.dispatch(event.t, event.build, event.record);
  }

  private send(t: string, key: string, build: (intents: number) => unknown, fromUser: boolean): UserEvent {
    const event: UserEvent = { t, key, build, record: { t, key, sent: 0 } };
    if (fromUser) this.userEvents.push(event);
    this.gateway.dispatch(t, build, event.record);
    return event;
  }
}
