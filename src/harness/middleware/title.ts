/**
 * Title: after the first completed turn, names the thread and stores the name in the thread's
 * state (`title`), where `Harness.getThread` reads it. With a model it asks for a short title;
 * without one, or when that call fails, it uses the start of the first user message. The title
 * call's usage is reported as `title`.
 */

import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage, isAIMessage, isHumanMessage, SystemMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";
import { z } from "zod";
import { withoutCutOffMark } from "../cut-off.js";
import { reportUsage, type UsageTarget, usageOf } from "../usage.js";

export const TITLE = "Title";

export interface TitleOptions {
  /** Model asked for the title; the first user message is shortened when absent. */
  model?: BaseChatModel;
  /** Longest title kept. */
  maxChars?: number;
  /** Where the title call's token usage goes. */
  usage?: UsageTarget;
}

function shorten(text: string, max: number): string {
  const flat = text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^["'`]+|["'`]+$/g, "");
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

async function askModel(model: BaseChatModel, user: string, reply: string, signal?: AbortSignal): Promise<BaseMessage> {
  const prompt = [
    new SystemMessage("Write a title of at most six words for this conversation. Reply with the title only."),
    new HumanMessage(`User: ${user.slice(0, 1000)}\nAssistant: ${reply.slice(0, 1000)}`),
  ];
  return model.invoke(prompt, { signal, tags: ["antler:title"] });
}

export function titleMiddleware(options: TitleOptions = {}) {
  const maxChars = options.maxChars ?? 60;
  return createMiddleware({
    name: TITLE,
    stateSchema: z.object({ title: z.string().optional() }),
    afterAgent: async (state, runtime) => {
      if (state.title) return undefined;
      const messages: BaseMessage[] = state.messages;
      const user = messages.find((m) => isHumanMessage(m))?.text ?? "";
      // A reply cut off by a new message reads as the user saw it, without the mark for the model.
      const replies = messages.filter((m) => isAIMessage(m)).map((m) => withoutCutOffMark(m.text));
      const reply = replies.findLast((t) => t.trim() !== "") ?? "";
      if (!user) return undefined;
      let title = "";
      if (options.model) {
        try {
          const answer = await askModel(options.model, user, reply, runtime.signal);
          reportUsage(options.usage, "title", usageOf(answer));
          title = answer.text;
        } catch {
          // A title is a nicety: fall back to the user's own words.
        }
      }
      return { title: shorten(title || user, maxChars) };
    },
  });
}
