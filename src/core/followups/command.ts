/**
 * `/queue`: shows what a message does here that arrives while a reply is being written, and,
 * where the settings allow it (`followups.allow_command`), picks another mode for this chat:
 * `/queue collect`, `/queue steer`, `/queue interrupt`, `/queue queue`, or `/queue default` to
 * go back to the configured one. The pick is stored per conversation and survives restarts.
 */
import type { InboundMessage } from "../../channels/types.js";
import { FOLLOWUP_MODES, type FollowupMode } from "../../config/followups.js";
import { commandArgument } from "../commands.js";
import type { CoreContext } from "../context.js";
import type { ChannelScope } from "../scope.js";
import { configuredFollowups, followupsFor, isFollowupMode, setPick } from "./settings.js";

/** What each mode does, as the chat reads it. */
const DOES: Record<FollowupMode, string> = {
  queue: "each get their own reply, in order, after the current one",
  collect: "are collected and answered together in one reply after the current one",
  steer: "are added to the reply I'm writing, before my next step",
  interrupt: "stop the reply I'm writing, and I answer the new message instead",
};

const RESET = new Set(["default", "reset"]);

/** The answer to `/queue` and `/queue MODE`. */
export async function queueCommand(core: CoreContext, scope: ChannelScope, msg: InboundMessage): Promise<string> {
  const wanted = commandArgument(msg.text).toLowerCase();
  const key = msg.ref.key;
  const configured = configuredFollowups(core, scope, msg);
  const current = await followupsFor(core, scope, msg);
  const modes = FOLLOWUP_MODES.join(", ");
  if (!wanted) {
    const how = configured.allow_command
      ? `Change it with /queue MODE (${modes}), or /queue default.`
      : "It cannot be changed in this chat.";
    return `Follow-up mode: ${current.mode}. Messages you send while I'm answering ${DOES[current.mode]}. ${how}`;
  }
  if (!configured.allow_command) return `The follow-up mode cannot be changed in this chat: it stays ${current.mode}.`;
  if (RESET.has(wanted)) {
    await setPick(core, scope, key, undefined);
    return `Back to this chat's default follow-up mode: ${configured.mode}. Messages you send while I'm answering ${DOES[configured.mode]}.`;
  }
  if (!isFollowupMode(wanted)) return `There is no follow-up mode "${wanted}". Pick one of: ${modes}, or default.`;
  await setPick(core, scope, key, wanted);
  return `Follow-up mode: ${wanted}. Messages you send while I'm answering ${DOES[wanted]}.`;
}
