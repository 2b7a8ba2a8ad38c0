/**
 * A button's `custom_id`: the question id, the button id and, where the message's channel does
 * not name the conversation by itself, the rest of its key. Each id is prefixed with its length
 * in base 36 and a dot, so ids may hold any character. Discord allows 1–100 characters.
 */

export const MAX_CUSTOM_ID = 100;

export interface ButtonTarget {
  questionId: string;
  buttonId: string;
  /** The conversation key's part beyond the channel the message is in (`:u<user>`), or "". */
  keyTail: string;
}

export function encodeCustomId(target: ButtonTarget): string {
  const part = (s: string) => `${s.length.toString(36)}.${s}`;
  return `${part(target.questionId)}${part(target.buttonId)}${target.keyTail}`;
}

/** The ids packed by {@link encodeCustomId}; undefined for ids Antler did not write. */
export function decodeCustomId(id: string): ButtonTarget | undefined {
  let at = 0;
  const take = (): string | undefined => {
    const dot = id.indexOf(".", at);
    if (dot <= at || dot - at > 3) return undefined;
    const length = Number.parseInt(id.slice(at, dot), 36);
    if (!Number.isInteger(length) || length < 0 || dot + 1 + length > id.length) return undefined;
    at = dot + 1 + length;
    return id.slice(dot + 1, at);
  };
  const questionId = take();
  const buttonId = questionId === undefined ? undefined : take();
  if (questionId === undefined || buttonId === undefined || questionId === "") return undefined;
  const keyTail = id.slice(at);
  if (keyTail !== "" && !/^:[\w-]+$/.test(keyTail)) return undefined;
  return { questionId, buttonId, keyTail };
}
