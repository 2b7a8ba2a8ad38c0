/**
 * Access rules, written once for every platform: who may talk to the bot, in which chats, and
 * whether group messages must mention it. Adapters build {@link AccessRules} from their config
 * (the shared keys below); the dispatcher enforces them.
 */
import { z } from "zod";
import { bool, idList } from "../../config/schema.js";
import type { AccessRules, InboundMessage } from "../types.js";

/** Config keys every adapter that has allowlists spreads into its zod schema. */
export const accessConfigShape = {
  /** User ids allowed to talk to the bot; empty = everyone. */
  allowed_users: idList().default([]),
  /** Chat ids the bot answers in; empty = every chat. */
  allowed_chats: idList().default([]),
  /** Groups: answer only when mentioned or replied to. */
  require_mention: bool().default(true),
  /** User ids who may answer anyone's question in a group; everyone else answers only their own. */
  approvers: idList().default([]),
};

export const AccessConfig = z.object(accessConfigShape);

export function accessRulesFrom(config: z.output<typeof AccessConfig>): AccessRules {
  return {
    allowedUsers: config.allowed_users,
    allowedChats: config.allowed_chats,
    requireMention: config.require_mention,
    approvers: config.approvers,
  };
}

export const OPEN_ACCESS: AccessRules = { allowedUsers: [], allowedChats: [], requireMention: true };

export function isAllowedUser(rules: AccessRules, userId: string): boolean {
  return rules.allowedUsers.length === 0 || rules.allowedUsers.includes(userId);
}

export function isAllowedChat(rules: AccessRules, chatId: string): boolean {
  return rules.allowedChats.length === 0 || rules.allowedChats.includes(chatId);
}

/** Why a message is not for the bot, or undefined when it should be handled. */
export function accessDenial(rules: AccessRules, msg: InboundMessage): "user" | "chat" | "mention" | undefined {
  if (!isAllowedChat(rules, msg.ref.chatId)) return "chat";
  if (!isAllowedUser(rules, msg.user.id)) return "user";
  if (msg.ref.chatType === "group" && rules.requireMention && !msg.mentioned && !msg.action) return "mention";
  return undefined;
}
