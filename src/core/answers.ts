/**
 * Reading a user's answer to a pending question: a button, an option number, an option label,
 * or — anything else — the user's own words.
 */
import type { PendingQuestion } from "../bindings/types.js";

export interface Answer {
  /** What the agent receives as the tool result. */
  value: string;
  /** True when one of the offered options was picked. */
  picked: boolean;
}

/** The option a button id names ("1".."n"), or undefined for an unknown id. */
export function answerFromButton(pending: PendingQuestion, buttonId: string): Answer | undefined {
  const index = Number(buttonId) - 1;
  const option = Number.isInteger(index) ? pending.options[index] : undefined;
  return option === undefined ? undefined : { value: option, picked: true };
}

/** Interprets free text: `2` or `2.` picks option 2, an option's label picks it, else it is a free answer. */
export function answerFromText(pending: PendingQuestion, text: string): Answer {
  const trimmed = text.trim();
  const number = /^(\d{1,2})[.)]?$/.exec(trimmed);
  if (number) {
    const option = pending.options[Number(number[1]) - 1];
    if (option !== undefined) return { value: option, picked: true };
  }
  const label = pending.options.find((o) => o.trim().toLowerCase() === trimmed.toLowerCase());
  if (label !== undefined) return { value: label, picked: true };
  return { value: trimmed, picked: false };
}
