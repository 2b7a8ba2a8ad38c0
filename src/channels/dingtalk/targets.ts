/**
 * Sending first on DingTalk: a group (openConversationId) or a person (staff id) an API caller
 * names → a ref with the key inbound messages from there get (inbound.ts). Such a ref has no
 * sessionWebhook, so `send` and `sendFile` go through the robot APIs. See "Sending first" in README.md.
 */
import { ChannelError, TargetUnreachableError } from "../../errors.js";
import type { ConversationRef, SendTarget } from "../types.js";
import { conversationKey, type SessionScope } from "./inbound.js";

export interface TargetSettings {
  channel: string;
  /** `corp_id` from config, when set. */
  corpId: string | undefined;
  scope: SessionScope;
}

/**
 * `{user}` is a staff id (a DM, sent with `oToMessages/batchSend`); `{chat}` is a group's
 * openConversationId (sent with `groupMessages/send`). With `session_scope: user` a group's
 * members each have their own conversation: `thread` names the member (staff id) whose
 * conversation it is; without it the key is the group's own.
 */
export function resolveDingTalkTarget(settings: TargetSettings, target: SendTarget): ConversationRef {
  const { channel, scope } = settings;
  const corp = target.workspace?.trim() || settings.corpId;
  if (!corp) {
    throw new ChannelError(
      channel,
      "config_missing",
      `channels.${channel}.corp_id is required to send first (or name the workspace in the target): ` +
        `it is the <corp> in this channel's conversation keys (${channel}:<corp>:…), your organisation's corp id`,
    );
  }
  if (target.user !== undefined) {
    const staff = target.user.trim();
    if (!staff) throw new TargetUnreachableError(channel, "the target names no staff id");
    return {
      channel,
      key: conversationKey(channel, corp, { direct: true, cid: "", user: staff, scope }),
      // The DM's conversationId is unknown before the person writes; the robot API needs only the staff id.
      chatId: staff,
      chatType: "direct",
      workspace: corp,
      extra: { staffId: staff },
    };
  }
  const cid = target.chat.trim();
  if (!cid) throw new TargetUnreachableError(channel, "the target names no openConversationId");
  const member = scope === "user" ? target.thread?.trim() : undefined;
  const key = member ? conversationKey(channel, corp, { direct: false, cid, user: member, scope }) : `${channel}:${corp}:${cid}`;
  return { channel, key, chatId: cid, chatType: "group", workspace: corp, extra: member ? { staffId: member } : {} };
}
