/**
 * Button payloads. Telegram gives `callback_data` 1-64 bytes, so a click carries only the
 * question id and the button id, length-prefixed so either may contain any character:
 * `<qid length in base 36>.<qid><button id>`.
 */

export const MAX_CALLBACK_BYTES = 64;

export function encodeCallbackData(questionId: string, buttonId: string): string {
  return `${questionId.length.toString(36)}.${questionId}${buttonId}`;
}

export function decodeCallbackData(data: string): { questionId: string; buttonId: string } | undefined {
  const dot = data.indexOf(".");
  if (dot <= 0) return undefined;
  const lengthText = data.slice(0, dot);
  if (!/^[0-9a-z]+$/.test(lengthText)) return undefined;
  const length = Number.parseInt(lengthText, 36);
  const rest = data.slice(dot + 1);
  if (rest.length <= length) return undefined;
  return { questionId: rest.slice(0, length), buttonId: rest.slice(length) };
}

export function callbackDataBytes(data: string): number {
  return Buffer.byteLength(data, "utf8");
}
