/**
 * Questions from `ask_clarification`: as buttons where the channel has them and the options
 * fit, else as a numbered list the user answers by number or in their own words.
 */

import { fitText, measureFor } from "../../channels/markdown/measure.js";
import type { Channel, MessageHandle, OutboundContent } from "../../channels/types.js";
import type { Clarification } from "../../harness/types.js";
import { noticeMarkdown } from "./notice.js";
import { Outbound } from "./outbound.js";
import type { RenderHooks } from "./types.js";

const DEFAULT_MAX_BUTTONS = 10;
const LIST_HINT = "_Reply with a number, or answer in your own words._";

/** The question's options as buttons (ids "1".."n") or, when buttons are unavailable/too many, a numbered list. */
export function questionContent(channel: Channel, c: Clarification, questionId: string): OutboundContent {
  const { buttons, maxButtons = DEFAULT_MAX_BUTTONS } = channel.capabilities;
  const text = c.context ? `${c.question}\n\n_${c.context.trim()}_` : c.question;
  if (c.options.length === 0) return { text };
  if (buttons && c.options.length <= maxButtons) {
    return { text, buttons: c.options.map((label, i) => ({ id: String(i + 1), label })), questionId };
  }
  const list = c.options.map((option, i) => `${i + 1}. ${option}`).join("\n");
  return { text: `${text}\n\n${list}\n\n${LIST_HINT}` };
}

/** Shows the chosen answer on the question message and removes its buttons. */
export async function closeQuestion(
  channel: Channel,
  question: MessageHandle,
  questionText: string,
  answer: string,
  hooks: RenderHooks = {},
): Promise<void> {
  // Without buttons the question was a list, and the user's own reply already shows the answer.
  if (!channel.capabilities.edits || !channel.capabilities.buttons) return;
  // The answer is the user's own words (or an outcome naming them): text, not Markdown.
  const answerLine = `\n\n${noticeMarkdown(channel, `→ ${answer}`)}`;
  const { maxTextLength: limit, markdown } = channel.capabilities;
  const measure = measureFor(markdown);
  // The question gives way to the answer line; only an answer too long by itself is cut too.
  const text = fitText(questionText, limit, measure, answerLine) ?? fitText(questionText + answerLine, limit, measure) ?? "…";
  const out = new Outbound(channel, hooks, 0);
  await out.deliver("edit", () => channel.edit(question, { text, buttons: [] }), false);
}
