/**
 * Who may answer a pending question. In a group, only the person who asked (the user whose
 * message started the run that asked) or one of the channel's approvers may; in a direct chat
 * only the other party exists. Anyone else is told so, privately where the platform can, and
 * the question stays open.
 */
import type { PendingQuestion } from "../bindings/types.js";
import type { AccessRules, Channel, InboundMessage } from "../channels/types.js";
import type { Logger } from "../log/logger.js";
import { withinCallLimit } from "./render/call-limit.js";

/** True when the sender of `msg` may answer `pending`. Questions stored without an asker are open to all. */
export function mayAnswer(rules: AccessRules, pending: PendingQuestion, msg: InboundMessage): boolean {
  if (msg.ref.chatType !== "group" || !pending.askedBy) return true;
  return msg.user.id === pending.askedBy.id || (rules.approvers ?? []).includes(msg.user.id);
}

/**
 * The refusal for `msg`. A click hears that the question is not theirs; a message hears too
 * that it was not taken as a new request, since a run would abandon the open question.
 * `everyone` addresses the sender by name, because the whole chat reads it.
 */
export function refusalText(pending: PendingQuestion, msg: InboundMessage, shownTo: "sender" | "everyone"): string {
  const asker = pending.askedBy?.name ?? "the person who asked";
  const text = msg.action
    ? `Only ${asker} can answer this question.`
    : `Only ${asker} can answer the open question here, so I didn't take your message. Please send it again once it's answered.`;
  const name = msg.user.name;
  return shownTo === "everyone" && name ? `${name}: ${text}` : text;
}

/**
 * Refuses an answer: privately when the channel can (the click's own answer, else a message
 * only the sender sees), otherwise through `notify`, which everyone in the chat sees.
 */
export async function refuseAnswer(
  channel: Channel,
  msg: InboundMessage,
  pending: PendingQuestion,
  notify: (text: string) => Promise<void>,
  logger: Logger,
): Promise<void> {
  logger.info({ channel: channel.name, key: msg.ref.key, user: msg.user.id }, "answer refused: not the asker or an approver");
  if (await tellPrivately(channel, msg, refusalText(pending, msg, "sender"), logger)) return;
  await notify(refusalText(pending, msg, "everyone"));
}

/** Shows `text` to the sender of `msg` only; false when the channel cannot (then nothing was shown). */
export async function tellPrivately(channel: Channel, msg: InboundMessage, text: string, logger: Logger): Promise<boolean> {
  if (msg.action && channel.answerAction) {
    const answered = await withinCallLimit(channel.name, "answering a click", channel.answerAction(msg, text)).catch(
      (err: unknown) => {
        logger.warn({ err, channel: channel.name }, "could not answer the click");
        return false;
      },
    );
    if (answered) return true;
  }
  if (!channel.notifyUser) return false;
  const shown = withinCallLimit(channel.name, "a message to one user", channel.notifyUser(msg.ref, msg.user.id, text));
  return shown.catch((err: unknown) => {
    logger.warn({ err, channel: channel.name }, "could not show a message to one user");
    return false;
  });
}

/** Acknowledges a click the core took without a notice, so an adapter holding it open lets go. */
export async function acknowledgeClick(channel: Channel, msg: InboundMessage, logger: Logger): Promise<void> {
  if (!msg.action || !channel.answerAction) return;
  await withinCallLimit(channel.name, "acknowledging a click", channel.answerAction(msg)).catch((err: unknown) =>
    logger.debug({ err, channel: channel.name }, "click not acknowledged"),
  );
}
