/**
 * Conversation refs of the web chat, and sending first: a target names one browser's
 * conversation. See "Sending first" in README.md.
 */
import { ChannelError, TargetUnreachableError } from "../../errors.js";
import type { ConversationRef, SendTarget } from "../types.js";
import { CLIENT_ID } from "./auth.js";

/** A conversation id the page makes up. */
export const CONVERSATION_ID = /^[A-Za-z0-9_-]{8,64}$/;

/** The ref of one browser's conversation: key `<channel>:<client>:<conversation>`, chatId `<client>/<conversation>`. */
export function webRef(channel: string, client: string, conversation: string): ConversationRef {
  return {
    channel,
    key: `${channel}:${client}:${conversation}`,
    chatId: `${client}/${conversation}`,
    chatType: "direct",
    workspace: client,
  };
}

/**
 * `{chat: "<client>/<conversation>"}` (the ref's chatId), or `{chat: "<conversation>",
 * workspace: "<client>"}`. A person has no address on the web chat: a browser is not a person,
 * and which of its conversations would be the DM?
 */
export function resolveWebTarget(channel: string, target: SendTarget): ConversationRef {
  if (target.user !== undefined) {
    throw new ChannelError(
      channel,
      "not_supported",
      "the web chat cannot reach a user, only a conversation: name it as chat <client id>/<conversation id>",
    );
  }
  const [first, second, ...rest] = target.chat.trim().split("/");
  const client = second === undefined ? target.workspace?.trim() : first;
  const conversation = second === undefined ? first : second;
  if (rest.length || !client || !CLIENT_ID.test(client) || !conversation || !CONVERSATION_ID.test(conversation)) {
    throw new TargetUnreachableError(
      channel,
      `"${target.chat}" is not a web chat conversation: use <client id>/<conversation id> (the ref's chatId), ` +
        "or the conversation id with the client id as workspace",
    );
  }
  return webRef(channel, client, conversation);
}
