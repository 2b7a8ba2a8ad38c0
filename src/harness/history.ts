/**
 * A thread's history as a person would read it again: what the user wrote and what the agent
 * answered, from the messages in the thread's checkpoint. Tool calls and their results are left
 * out, except an answered `ask_clarification`, which reads as the question with its answer.
 */
import { type BaseMessage, isAIMessage, isHumanMessage, isToolMessage } from "@langchain/core/messages";
import { withoutCutOffMark } from "./cut-off.js";
import { ASK_CLARIFICATION } from "./tools/clarification.js";
import type { HistoryEntry } from "./types.js";

/** The block the media desk adds to a message with files; the file names stay, the notes for the model go. */
const UPLOADED = /\n*<uploaded_files>[\s\S]*?<\/uploaded_files>\s*$/;

export function historyOf(messages: readonly BaseMessage[]): HistoryEntry[] {
  const entries: HistoryEntry[] = [];
  const questions = new Map<string, string>();
  for (const [index, message] of messages.entries()) {
    const id = message.id ?? `m${index}`;
    if (isHumanMessage(message)) {
      const files = filesOf(message.text);
      const text = message.text.replace(UPLOADED, "").trim();
      const shown = [text, ...files.map((name) => `📎 ${name}`)].filter(Boolean).join("\n");
      if (shown) entries.push({ id, role: "user", text: shown });
    } else if (isAIMessage(message)) {
      for (const call of message.tool_calls ?? []) {
        const question = (call.args as { question?: unknown }).question;
        if (call.name === ASK_CLARIFICATION && call.id && typeof question === "string") questions.set(call.id, question);
      }
      // A reply cut off by a new message reads as the user saw it: the mark is for the model.
      const text = withoutCutOffMark(message.text.trim()).trim();
      if (text) entries.push({ id, role: "assistant", text });
    } else if (isToolMessage(message)) {
      const question = questions.get(message.tool_call_id);
      if (question !== undefined) entries.push({ id, role: "assistant", text: `${question}\n\n→ ${message.text.trim()}` });
    }
  }
  return entries;
}

/** The names of the files listed in a message's `<uploaded_files>` block. */
function filesOf(text: string): string[] {
  const block = UPLOADED.exec(text)?.[0];
  if (!block) return [];
  return [...block.matchAll(/^- (.+?)(?: \(|:)/gm)].map((m) => m[1] as string);
}
