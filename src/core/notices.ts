/**
 * What the pipeline tells a chat in its own words, when there is no reply to show: a refusal, a
 * message it could not take, a run that was cut off. Approval and dropped-question notices live
 * with their rooms (approval-desk.ts, dropped-questions.ts).
 */
import type { RunLimit } from "../harness/types.js";

export const NOTICES = {
  busy: "I'm still working through your earlier messages, so I couldn't take this one. Please send it again in a moment.",
  restarted: "I was restarted while answering this — please send it again.",
  tooOld: "I was restarted before I got to this message, and it is too old to answer now — please send it again.",
  notAllowed: "Sorry, you're not allowed to use this bot.",
  nonText: "I can only read text messages for now.",
  staleQuestion: "That question is no longer open.",
  nothingToStop: "Nothing is running right now.",
  newThread: "Started a new conversation. What would you like to talk about?",
  failed: "Something went wrong while handling your message. Please try again.",
  noReply: "I finished without writing a reply. Please try again, or ask differently.",
  /** A click from someone the channel's access rules do not allow, answered to them alone. */
  clickNotAllowed: "You are not allowed to answer this question.",
  /** A message a channel that never redelivers could not hand over (recording kept failing). */
  notTaken: "I couldn't take your message just now. Please send it again.",
} as const;

/** After a reply a limit cut short (`max_tool_calls_per_run`, `max_tokens_per_run`). */
export function limitNotice(limit: RunLimit): string {
  const what = limit.kind === "tool_calls" ? "tool calls" : "tokens";
  return `I stopped early: this run reached its limit of ${limit.max.toLocaleString("en-US")} ${what}.`;
}
