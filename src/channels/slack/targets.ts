/**
 * Sending first on Slack: a person (`{user}`, reached in their DM with the bot, opened by
 * `conversations.open`) or a conversation (`{chat, thread?}`) becomes the ConversationRef that
 * messages from there get (inbound.ts's keys): a DM is one conversation whatever thread it
 * uses; in a channel the thread is the conversation. The key's workspace is the target's, or the
 * bot's own team from auth.test.
 */
import type { webApi } from "@slack/bolt";
import { ChannelError, TargetUnreachableError } from "../../errors.js";
import type { PlatformCalls } from "../kit/platform-call.js";
import type { ConversationRef, SendTarget } from "../types.js";
import { conversationKey } from "./inbound.js";
import { mapSlackError } from "./map-error.js";

type WebClient = InstanceType<typeof webApi.WebClient>;

/** What conversations.info tells, as far as a target needs it. */
interface ConversationInfo {
  is_im?: boolean;
  is_archived?: boolean;
  user?: string;
}

export class SlackTargets {
  constructor(
    private readonly name: string,
    private readonly web: () => WebClient,
    private readonly calls: PlatformCalls,
    /** The bot's team id from auth.test, once started. */
    private readonly team: () => string | undefined,
  ) {}

  async resolve(target: SendTarget): Promise<ConversationRef> {
    const team = target.workspace ?? this.team();
    if (!team) throw new ChannelError(this.name, "not_started", "the Slack channel is not running");
    if (target.user !== undefined) return this.direct(team, await this.openDm(target.user), target.user);
    const info = await this.info(target.chat);
    if (info?.is_archived) throw new TargetUnreachableError(this.name, `conversations.info: is_archived (${target.chat})`);
    // Without conversations.info (no *:read scope) a DM is told by its id, as clicks are (inbound.ts).
    const im = info ? info.is_im === true : target.chat.startsWith("D");
    if (im) return this.direct(team, target.chat, info?.user, target.thread);
    const ref: ConversationRef = {
      channel: this.name,
      key: conversationKey(this.name, team, target.chat, target.thread),
      chatId: target.chat,
      workspace: team,
      chatType: "group",
      extra: { team },
    };
    if (target.thread !== undefined) ref.threadId = target.thread;
    return ref;
  }

  /** A DM: one conversation, keyed without a thread; a given thread only places the message. */
  private direct(team: string, channel: string, user: string | undefined, thread?: string): ConversationRef {
    const ref: ConversationRef = {
      channel: this.name,
      key: conversationKey(this.name, team, channel),
      chatId: channel,
      workspace: team,
      chatType: "direct",
      extra: user ? { team, user } : { team },
    };
    if (thread !== undefined) ref.threadId = thread;
    return ref;
  }

  private async openDm(user: string): Promise<string> {
    const result = await this.call("conversations.open", () => this.web().conversations.open({ users: user }));
    const id = result.channel?.id;
    if (!id) throw new ChannelError(this.name, "platform_error", "conversations.open returned no channel id");
    return id;
  }

  /** One Web API call; a refused target is the target's state, so only other failures go on the channel's status. */
  private async call<T>(method: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      const mapped = mapSlackError(this.name, err, method);
      if (mapped instanceof TargetUnreachableError) throw mapped;
      throw this.calls.note(mapped);
    }
  }

  /** The conversation as Slack describes it; undefined when the app may not read it (a missing scope). */
  private async info(channel: string): Promise<ConversationInfo | undefined> {
    try {
      const result = await this.call("conversations.info", () => this.web().conversations.info({ channel }));
      return (result.channel ?? {}) as ConversationInfo;
    } catch (err) {
      if (err instanceof ChannelError && err.code === "forbidden") return undefined;
      throw err;
    }
  }
}
