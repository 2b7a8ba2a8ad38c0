/**
 * The users' side of the fake Discord: messages people write in DMs, channels, threads and
 * forum posts, with files and voice messages. Each is stored and dispatched as MESSAGE_CREATE
 * (a forum post first as THREAD_CREATE), kept so a test can replay it.
 */
import type { Events } from "./events.js";
import { type Cdn, IS_VOICE_MESSAGE, type StoredAttachment, type UserUpload } from "./files.js";
import { ChannelKind, type FakeChannel, type FakeUser, type StoredMessage, snowflake, type World } from "./world.js";

export interface SayOptions {
  mention?: boolean;
  replyTo?: string;
  /** A reply pings the replied-to author unless this is false (the client's "@ on" default). */
  replyPing?: boolean;
}

export interface VoiceOptions {
  /** A guild text channel or thread; the user's DM when left out. */
  channelId?: string;
  durationSecs?: number;
  /** Discord's client always names it voice-message.ogg. */
  name?: string;
  replyTo?: string;
}

type PostOptions = SayOptions & { id?: string; attachments?: StoredAttachment[]; flags?: number };

export class UserPosts {
  constructor(
    private readonly world: World,
    private readonly events: Events,
    private readonly cdn: Cdn,
  ) {}

  dm(user: FakeUser, text: string): StoredMessage {
    return this.post(this.world.dmWith(user), user, text, {});
  }

  say(channelId: string, user: FakeUser, text: string, options: SayOptions): StoredMessage {
    return this.post(this.textChannel(channelId), user, text, options);
  }

  forumPost(user: FakeUser, title: string, text: string, options: { mention?: boolean }): StoredMessage {
    const forum = this.world.channelByName("help");
    // A forum post is a thread whose id is its starter message's id.
    const id = snowflake();
    const thread = this.world.addThread(forum, id, title, user.id);
    this.events.threadCreate(thread, true);
    return this.post(thread, user, text, { ...options, id });
  }

  sendFiles(user: FakeUser, files: UserUpload[], caption: string, options: SayOptions & { channelId?: string }): StoredMessage {
    const channel = options.channelId === undefined ? this.world.dmWith(user) : this.textChannel(options.channelId);
    const attachments = files.map((f) => this.cdn.fromUser(channel.id, f));
    const { channelId: _where, ...say } = options;
    return this.post(channel, user, caption, { ...say, attachments });
  }

  sendVoice(user: FakeUser, data: Uint8Array, options: VoiceOptions): StoredMessage {
    const channel = options.channelId === undefined ? this.world.dmWith(user) : this.textChannel(options.channelId);
    const upload = { name: options.name ?? "voice-message.ogg", data, contentType: "audio/ogg" };
    const voice = { durationSecs: options.durationSecs ?? 1.5, waveform: Buffer.alloc(16, 128).toString("base64") };
    const attachments = [this.cdn.fromUser(channel.id, upload, voice)];
    const reply = options.replyTo ? { replyTo: options.replyTo } : {};
    return this.post(channel, user, "", { ...reply, attachments, flags: IS_VOICE_MESSAGE });
  }

  private textChannel(channelId: string): FakeChannel {
    const channel = this.world.channels.get(channelId);
    if (!channel || channel.type === ChannelKind.GuildForum || channel.type === ChannelKind.DM) {
      throw new Error(`fake discord: ${channelId} is not a guild text channel or thread`);
    }
    return channel;
  }

  private post(channel: FakeChannel, user: FakeUser, text: string, options: PostOptions): StoredMessage {
    const bot = this.world.bot;
    const ref = options.replyTo ? this.world.messages.get(options.replyTo) : undefined;
    if (options.replyTo && !ref) throw new Error(`fake discord: no message ${options.replyTo} to reply to`);
    const content = options.mention ? `<@${bot.id}> ${text}` : text;
    const mentions = [...(options.mention ? [bot] : [])];
    if (ref && options.replyPing !== false && !mentions.includes(ref.author)) mentions.push(ref.author);
    const m = this.world.add({
      ...(options.id ? { id: options.id } : {}),
      channelId: channel.id,
      ...(channel.guildId ? { guildId: channel.guildId } : {}),
      author: user,
      content,
      components: [],
      type: ref ? 19 : 0,
      flags: options.flags ?? 0,
      mentions,
      ...(ref ? { referenceId: ref.id } : {}),
      ...(options.attachments?.length ? { attachments: options.attachments } : {}),
    });
    this.events.message("MESSAGE_CREATE", m, true);
    return m;
  }
}
