/**
 * What the fake Discord remembers: one guild with its channels and threads, the DM channels,
 * every message with each version a user saw, and ephemeral messages only one user saw. It also
 * builds the JSON shapes the API and the Gateway send (channel, message, guild objects).
 */

import type { StoredAttachment } from "./files.js";

export type Json = Record<string, unknown>;

export interface FakeUser {
  id: string;
  username: string;
  globalName?: string;
  bot?: boolean;
}

export const ChannelKind = { GuildText: 0, DM: 1, PublicThread: 11, GuildForum: 15 } as const;

export interface FakeChannel {
  id: string;
  type: number;
  name?: string;
  guildId?: string;
  parentId?: string;
  /** DM channels: the user on the other side. */
  recipient?: FakeUser;
  /** Threads: who started it and when. */
  ownerId?: string;
  autoArchiveMinutes?: number;
  createdAt: number;
  lastMessageId?: string;
}

export interface MessageVersion {
  content: string;
  components: Json[];
  at: number;
}

export interface StoredMessage {
  id: string;
  channelId: string;
  guildId?: string;
  author: FakeUser;
  content: string;
  components: Json[];
  /** 0 default, 19 reply, 20 a slash command's answer. */
  type: number;
  flags: number;
  mentions: FakeUser[];
  referenceId?: string;
  createdAt: number;
  editedAt?: number;
  /** Every state a user saw, oldest first; an edit that changes nothing adds none. */
  versions: MessageVersion[];
  deleted: boolean;
  /** Id of the thread started from this message. */
  threadId?: string;
  /** Only this user sees it (an ephemeral interaction answer). */
  ephemeralFor?: string;
  /** A deferred interaction answer still "thinking". */
  loading?: boolean;
  /** Put there by the test (a bot message that did not come over REST). */
  injected?: boolean;
  /** Files posted with it. */
  attachments?: StoredAttachment[];
}

/** Builds an attachment object with a working link (the CDN in files.ts). */
export interface AttachmentLinks {
  json(channelId: string, a: StoredAttachment): Json;
}

const DISCORD_EPOCH = 1420070400000n;
let increment = 0n;

/** A snowflake for `at`: ids grow with time, as Discord's do. */
export function snowflake(at = Date.now()): string {
  increment = (increment + 1n) & 0xfffn;
  return (((BigInt(at) - DISCORD_EPOCH) << 22n) | (1n << 17n) | increment).toString();
}

/** The timestamp a snowflake carries. */
export function snowflakeTime(id: string): number {
  return Number((BigInt(id) >> 22n) + DISCORD_EPOCH);
}

/** Permission bits the bot has everywhere: view, send, embed, history, threads, commands. */
const BOT_PERMISSIONS = String(
  (1n << 6n) | (1n << 10n) | (1n << 11n) | (1n << 14n) | (1n << 15n) | (1n << 16n) | (1n << 31n) | (1n << 35n) | (1n << 38n),
);

export function userJson(u: FakeUser): Json {
  return {
    id: u.id,
    username: u.username,
    global_name: u.globalName ?? null,
    discriminator: "0",
    avatar: null,
    public_flags: 0,
    ...(u.bot ? { bot: true } : {}),
  };
}

function memberJson(joinedAt: number, roles: string[] = []): Json {
  return {
    roles,
    nick: null,
    avatar: null,
    joined_at: new Date(joinedAt).toISOString(),
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
  };
}

export class World {
  readonly channels = new Map<string, FakeChannel>();
  readonly messages = new Map<string, StoredMessage>();
  readonly users = new Map<string, FakeUser>();
  private readonly dmByUser = new Map<string, string>();
  /** Users whose privacy settings refuse DMs from this bot: a send to their DM gets 50007. */
  readonly closedDms = new Set<string>();
  /** Messages created with `enforce_nonce`, by author and nonce: a repeat within {@link nonceWindowMs} returns the first. */
  readonly nonces = new Map<string, { messageId: string; at: number }>();
  /** How long Discord keeps a nonce unique ("the past few minutes"). */
  nonceWindowMs = 5 * 60_000;
  private readonly bootedAt = Date.now();
  /** Where attachment objects get their links; set by the fake once it listens. */
  links: AttachmentLinks | undefined;

  constructor(
    readonly bot: FakeUser,
    readonly guild: { id: string; name: string },
    channels: Array<{ id: string; name: string; type: number }>,
    users: FakeUser[],
  ) {
    for (const c of channels) this.channels.set(c.id, { ...c, guildId: guild.id, createdAt: this.bootedAt });
    for (const u of [bot, ...users]) this.users.set(u.id, u);
  }

  channelByName(name: string): FakeChannel {
    const c = [...this.channels.values()].find((x) => x.name === name && x.type !== ChannelKind.PublicThread);
    if (!c) throw new Error(`fake discord: no channel named ${name}`);
    return c;
  }

  /** The DM channel between the bot and `user` (Discord keeps one per pair). */
  dmWith(user: FakeUser): FakeChannel {
    let id = this.dmByUser.get(user.id);
    if (!id) {
      id = snowflake();
      this.dmByUser.set(user.id, id);
      this.channels.set(id, { id, type: ChannelKind.DM, recipient: user, createdAt: Date.now() });
    }
    return this.channels.get(id) as FakeChannel;
  }

  threads(): FakeChannel[] {
    return [...this.channels.values()].filter((c) => c.type === ChannelKind.PublicThread);
  }

  addThread(parent: FakeChannel, id: string, name: string, ownerId: string, autoArchiveMinutes = 4320): FakeChannel {
    const thread: FakeChannel = {
      id,
      type: ChannelKind.PublicThread,
      name,
      guildId: parent.guildId as string,
      parentId: parent.id,
      ownerId,
      autoArchiveMinutes,
      createdAt: Date.now(),
    };
    this.channels.set(id, thread);
    return thread;
  }

  /** Stores a message; its first version is what it shows now. */
  add(m: Omit<StoredMessage, "versions" | "deleted" | "createdAt" | "id"> & { id?: string }): StoredMessage {
    const at = Date.now();
    const stored: StoredMessage = { ...m, id: m.id ?? snowflake(at), createdAt: at, deleted: false, versions: [] };
    if (!stored.loading) stored.versions.push({ content: stored.content, components: stored.components, at });
    this.messages.set(stored.id, stored);
    const channel = this.channels.get(stored.channelId);
    if (channel && !stored.ephemeralFor) channel.lastMessageId = stored.id;
    return stored;
  }

  /** Applies an edit; records a version only when what a user sees changed. */
  edit(m: StoredMessage, change: { content?: string; components?: Json[] }): void {
    const at = Date.now();
    if (change.content !== undefined) m.content = change.content;
    if (change.components !== undefined) m.components = change.components;
    m.editedAt = at;
    m.loading = false;
    const last = m.versions.at(-1);
    const same = last && last.content === m.content && JSON.stringify(last.components) === JSON.stringify(m.components);
    if (!same) m.versions.push({ content: m.content, components: m.components, at });
  }

  in(channelId: string): StoredMessage[] {
    return [...this.messages.values()].filter((m) => m.channelId === channelId && !m.ephemeralFor);
  }

  // ---- JSON shapes ----

  channelJson(c: FakeChannel): Json {
    const base: Json = { id: c.id, type: c.type, flags: 0, last_message_id: c.lastMessageId ?? null };
    if (c.type === ChannelKind.DM) return { ...base, recipients: c.recipient ? [userJson(c.recipient)] : [] };
    const guildPart: Json = {
      ...base,
      guild_id: c.guildId,
      name: c.name,
      parent_id: c.parentId ?? null,
      rate_limit_per_user: 0,
      nsfw: false,
    };
    if (c.type === ChannelKind.PublicThread) return { ...guildPart, ...this.threadPart(c) };
    const channel: Json = { ...guildPart, position: 0, permission_overwrites: [], topic: null };
    if (c.type === ChannelKind.GuildForum) {
      Object.assign(channel, {
        available_tags: [],
        default_reaction_emoji: null,
        default_sort_order: null,
        default_forum_layout: 0,
        default_thread_rate_limit_per_user: 0,
      });
    }
    return channel;
  }

  private threadPart(c: FakeChannel): Json {
    const count = this.in(c.id).length;
    return {
      owner_id: c.ownerId,
      message_count: count,
      total_message_sent: count,
      member_count: 1,
      applied_tags: [],
      thread_metadata: {
        archived: false,
        locked: false,
        auto_archive_duration: c.autoArchiveMinutes ?? 4320,
        archive_timestamp: new Date(c.createdAt).toISOString(),
        create_timestamp: new Date(c.createdAt).toISOString(),
      },
    };
  }

  /** A message as the API returns it; `withContent: false` empties what the MessageContent intent guards. */
  messageJson(m: StoredMessage, options: { withContent?: boolean; gateway?: boolean; nested?: boolean } = {}): Json {
    const shown = options.withContent ?? true;
    const out: Json = {
      id: m.id,
      channel_id: m.channelId,
      author: userJson(m.author),
      content: shown ? m.content : "",
      timestamp: new Date(m.createdAt).toISOString(),
      edited_timestamp: m.editedAt ? new Date(m.editedAt).toISOString() : null,
      tts: false,
      mention_everyone: false,
      mentions: m.mentions.map((u) => ({ ...userJson(u), ...(m.guildId && options.gateway ? { member: this.member(u) } : {}) })),
      mention_roles: [],
      attachments: shown ? (m.attachments ?? []).map((a) => this.links?.json(m.channelId, a) ?? { id: a.id }) : [],
      embeds: [],
      pinned: false,
      type: m.type,
      flags: m.flags | (m.threadId ? 1 << 5 : 0) | (m.loading ? 1 << 7 : 0),
      components: shown ? m.components : [],
    };
    if (m.author.bot && m.author.id === this.bot.id) out.application_id = this.bot.id;
    if (m.referenceId) {
      const ref = this.messages.get(m.referenceId);
      out.message_reference = { type: 0, message_id: m.referenceId, channel_id: ref?.channelId ?? m.channelId };
      if (m.guildId) (out.message_reference as Json).guild_id = m.guildId;
      if (!options.nested)
        out.referenced_message = ref && !ref.deleted ? this.messageJson(ref, { ...options, nested: true }) : null;
    }
    const thread = m.threadId ? this.channels.get(m.threadId) : undefined;
    if (thread && !options.nested) out.thread = this.channelJson(thread);
    if (options.gateway) {
      const channel = this.channels.get(m.channelId);
      if (channel) out.channel_type = channel.type;
      if (m.guildId) {
        out.guild_id = m.guildId;
        out.member = this.member(m.author);
      }
    }
    return out;
  }

  member(u: FakeUser): Json {
    return memberJson(this.bootedAt, u.id === this.bot.id ? [this.botRoleId] : []);
  }

  memberWithUser(u: FakeUser): Json {
    return { ...this.member(u), user: userJson(u), permissions: BOT_PERMISSIONS };
  }

  get botRoleId(): string {
    return (BigInt(this.guild.id) + 1n).toString();
  }

  guildJson(): Json {
    const role = (id: string, name: string, managed: boolean, position: number) => ({
      id,
      name,
      color: 0,
      colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
      hoist: false,
      icon: null,
      unicode_emoji: null,
      position,
      permissions: BOT_PERMISSIONS,
      managed,
      mentionable: false,
      flags: 0,
      ...(managed ? { tags: { bot_id: this.bot.id } } : {}),
    });
    const inGuild = [...this.channels.values()].filter((c) => c.guildId === this.guild.id);
    return {
      id: this.guild.id,
      name: this.guild.name,
      icon: null,
      splash: null,
      discovery_splash: null,
      banner: null,
      description: null,
      owner_id: [...this.users.values()].find((u) => !u.bot)?.id ?? this.bot.id,
      afk_channel_id: null,
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      mfa_level: 0,
      nsfw_level: 0,
      premium_tier: 0,
      premium_progress_bar_enabled: false,
      preferred_locale: "en-US",
      system_channel_id: null,
      system_channel_flags: 0,
      rules_channel_id: null,
      public_updates_channel_id: null,
      safety_alerts_channel_id: null,
      vanity_url_code: null,
      application_id: null,
      features: [],
      emojis: [],
      stickers: [],
      roles: [role(this.guild.id, "@everyone", false, 0), role(this.botRoleId, this.bot.username, true, 1)],
      joined_at: new Date(this.bootedAt).toISOString(),
      large: false,
      unavailable: false,
      member_count: this.users.size,
      max_members: 500000,
      // Discord sends only the bot's own member without the GuildMembers intent.
      members: [{ ...this.member(this.bot), user: userJson(this.bot) }],
      channels: inGuild.filter((c) => c.type !== ChannelKind.PublicThread).map((c) => this.channelJson(c)),
      threads: inGuild.filter((c) => c.type === ChannelKind.PublicThread).map((c) => this.channelJson(c)),
      voice_states: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    };
  }
}
