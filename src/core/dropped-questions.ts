/**
 * An open question dropped because the bot's setup changed: the config's routes now send the chat
 * to another agent (or its agent is gone), so the thread that asked is no longer the
 * conversation's and cannot be resumed. The user is told once, when the conversation moves on
 * (their next message, or a click on the old buttons), and the old buttons are taken away.
 * Once, because moving clears the question from the store: later messages find nothing to tell.
 */
import type { PendingQuestion } from "../bindings/types.js";
import type { Channel, MessageHandle } from "../channels/types.js";
import type { Logger } from "../log/logger.js";
import { approvalOf, requestContent } from "./approvals.js";
import { closeQuestion, type RenderHooks } from "./render/index.js";
import { handleFromJson } from "./stored.js";

export const DROPPED_NOTICES = {
  /** Before the message that moved the conversation runs. */
  message: "Your open question was closed because this bot's setup changed, so this message starts a new conversation.",
  /** For a click on the dropped question's buttons. */
  click: "That question was closed because this bot's setup changed. Send a message to start a new conversation.",
} as const;

/** What the old question's message shows instead of its buttons. */
const CLOSED_LINE = "Closed: this bot's setup changed";

/** Tells the user the question was dropped, and takes its buttons away. */
export async function tellDropped(
  channel: Channel,
  pending: PendingQuestion,
  notify: (text: string) => Promise<void>,
  hooks: RenderHooks,
  logger: Logger,
): Promise<void> {
  await notify(DROPPED_NOTICES.message);
  await closeDropped(channel, pending, hooks, logger);
}

/** Removes the buttons of a dropped question (each call's message, for an approval). */
export async function closeDropped(
  channel: Channel,
  pending: PendingQuestion,
  hooks: RenderHooks,
  logger: Logger,
): Promise<void> {
  const approval = approvalOf(pending);
  const posted = handleFromJson(pending.posted);
  const messages: Array<{ handle: MessageHandle; text: string }> = approval
    ? approval.requests.flatMap((request, i) => {
        const handle = approval.posted[i];
        return handle && approval.decisions[i] === null ? [{ handle, text: requestContent(channel, request, i, "").text }] : [];
      })
    : posted
      ? [{ handle: posted, text: pending.question }]
      : [];
  for (const { handle, text } of messages) {
    await closeQuestion(channel, handle, text, CLOSED_LINE, hooks).catch((err: unknown) =>
      logger.warn({ err, channel: channel.name }, "could not close a dropped question's message"),
    );
  }
}
