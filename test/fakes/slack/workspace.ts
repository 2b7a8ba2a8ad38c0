/**
 * Who and where the fake Slack's bot may reach: the workspace's members, its conversations, and
 * whether the bot is in them. Slack's answers, with its error codes: a message to a conversation
 * nobody knows is `channel_not_found`, to one the bot left `not_in_channel`, to an archived one
 * `is_archived`; `conversations.open` answers `user_not_found` for a stranger and `cannot_dm_bot`
 * for the bot itself.
 */
import { type Json, SlackApiError } from "./web-api.js";

interface Conversation {
  id: string;
  kind: "channel" | "im";
  /** The bot is a member (an IM always has it). */
  member: boolean;
  archived: boolean;
  /** The other person of an IM. */
  user?: string;
}

export class FakeWorkspace {
  /** Members of the workspace (user ids). */
  readonly users = new Set<string>(["U0001"]);
  private readonly conversations = new Map<string, Conversation>();

  constructor(private readonly botUserId: string) {
    // The conversations the existing tests talk in, with the bot in each.
    this.addChannel("C0001");
    this.addChannel("C0777");
    this.conversations.set("D0001", { id: "D0001", kind: "im", member: true, archived: false, user: "U0001" });
  }

  /** A channel the bot is in (or, with `member: false`, one it is not in). */
  addChannel(id: string, o: { member?: boolean } = {}): void {
    this.conversations.set(id, { id, kind: "channel", member: o.member ?? true, archived: false });
  }

  /** The bot is removed from a channel. */
  removeBot(id: string): void {
    const c = this.conversations.get(id);
    if (c) c.member = false;
  }

  archive(id: string): void {
    const c = this.conversations.get(id);
    if (c) c.archived = true;
  }

  /** A user wrote in `channel`: both exist from now on (an unknown D… id is their IM with the bot). */
  sawMessage(channel: string, user: string): void {
    this.users.add(user);
    if (this.conversations.has(channel)) return;
    if (channel.startsWith("D"))
      this.conversations.set(channel, { id: channel, kind: "im", member: true, archived: false, user });
    else this.addChannel(channel);
  }

  /** Throws Slack's error when the bot may not post to `channel`. */
  postable(channel: string): void {
    const c = this.conversations.get(channel);
    if (!c) throw new SlackApiError("channel_not_found");
    if (c.archived) throw new SlackApiError("is_archived");
    if (!c.member) throw new SlackApiError("not_in_channel");
  }

  /** `conversations.open {users}`: the IM with one person, opened when there is none yet. */
  open(a: Json): Json {
    const users = typeof a.users === "string" ? a.users.split(",").filter(Boolean) : [];
    if (users.length === 0) throw new SlackApiError("users_list_not_supplied");
    if (users.length > 1) throw new SlackApiError("not_supported_in_this_fake");
    const user = users[0] as string;
    if (user === this.botUserId) throw new SlackApiError("cannot_dm_bot");
    if (!this.users.has(user)) throw new SlackApiError("user_not_found");
    const existing = [...this.conversations.values()].find((c) => c.kind === "im" && c.user === user);
    const id = existing?.id ?? `D${user.replace(/^U/, "")}`;
    if (!existing) this.conversations.set(id, { id, kind: "im", member: true, archived: false, user });
    return { channel: { id }, ...(existing ? { already_open: true } : {}) };
  }

  /** `conversations.info {channel}`: what Slack tells of a conversation the bot can see. */
  info(a: Json): Json {
    const c = typeof a.channel === "string" ? this.conversations.get(a.channel) : undefined;
    if (!c) throw new SlackApiError("channel_not_found");
    const base = { id: c.id, is_archived: c.archived, created: 1_700_000_000 };
    if (c.kind === "im") return { channel: { ...base, is_im: true, is_channel: false, user: c.user } };
    return { channel: { ...base, is_im: false, is_channel: true, is_member: c.member, name: c.id.toLowerCase() } };
  }
}
