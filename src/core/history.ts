/**
 * A conversation read back for its channel (the web chat after a reload): the current thread's
 * history from its checkpoint, and the messages still waiting for a click, rebuilt the way they
 * were sent.
 */

import type { ConversationHistory, WaitingMessage } from "../channels/types.js";
import { DEFAULT_AGENT } from "../config/agents.js";
import { approvalOf, openCalls, requestContent } from "./approvals.js";
import type { Conversations } from "./conversations.js";
import { questionContent } from "./render/question.js";
import type { ChannelScope } from "./scope.js";
import { handleFromJson } from "./stored.js";

export async function conversationHistory(
  conversations: Conversations,
  scope: ChannelScope,
  key: string,
): Promise<ConversationHistory> {
  const { store, channel } = scope;
  const binding = await store.currentBinding(key);
  const agent = binding?.agent ?? DEFAULT_AGENT;
  // A conversation of an agent the config no longer has starts over with its next message.
  if (!binding || !conversations.serves(scope, agent)) return { messages: [], waiting: [] };
  const harness = await conversations.harness(scope, agent);
  const messages = (await harness.history?.(binding.threadId)) ?? [];
  const pending = await store.getPending(binding.threadId);
  const waiting: WaitingMessage[] = [];
  const approval = pending && approvalOf(pending);
  if (pending && approval) {
    for (const index of openCalls(approval)) {
      const request = approval.requests[index];
      if (!request) continue;
      const posted = approval.posted[index] ?? undefined;
      waiting.push({ content: requestContent(channel, request, index, pending.questionId), ...(posted ? { posted } : {}) });
    }
  } else if (pending) {
    const question = { interruptId: pending.interruptId, question: pending.question, options: pending.options };
    const posted = handleFromJson(pending.posted);
    waiting.push({ content: questionContent(channel, question, pending.questionId), ...(posted ? { posted } : {}) });
  }
  return { messages, waiting };
}
