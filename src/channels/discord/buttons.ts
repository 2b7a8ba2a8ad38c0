/**
 * Buttons on Discord: the action rows a question's buttons are laid out in (five rows of five,
 * Approve green and Reject red), and each button's `custom_id`: the question id, the button id
 * and, where the message's channel does not name the conversation by itself, the rest of its
 * key. Each id is prefixed with its length in base 36 and a dot, so ids may hold any character.
 * Discord allows 1–100 characters.
 */
import { type APIActionRowComponent, type APIButtonComponent, ButtonStyle, ComponentType } from "discord.js";
import { ChannelError } from "../../errors.js";
import type { OutboundContent } from "../types.js";

export const MAX_CUSTOM_ID = 100;
const MAX_LABEL = 80;
const ROW_SIZE = 5;
const MAX_ROWS = 5;
/** The most buttons one message holds. */
export const MAX_BUTTONS = ROW_SIZE * MAX_ROWS;

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

/** The action rows for `content`'s buttons, or undefined when it has none. */
export function buttonRows(
  channel: string,
  content: OutboundContent,
  tail: string,
): APIActionRowComponent<APIButtonComponent>[] | undefined {
  const buttons = content.buttons;
  if (!buttons || buttons.length === 0) return undefined;
  const questionId = content.questionId ?? "";
  const made: APIButtonComponent[] = buttons.slice(0, MAX_BUTTONS).map((b) => {
    const customId = encodeCustomId({ questionId, buttonId: b.id, keyTail: tail });
    if (customId.length > MAX_CUSTOM_ID) {
      throw new ChannelError(
        channel,
        "content_rejected",
        `button "${b.label}" needs a custom_id of ${customId.length} characters; Discord allows ${MAX_CUSTOM_ID}: use shorter question and button ids`,
      );
    }
    const label = b.label.length > MAX_LABEL ? `${b.label.slice(0, MAX_LABEL - 1)}…` : b.label;
    return { type: ComponentType.Button, style: styleOf(b.id), label: label || "…", custom_id: customId };
  });
  const rows: APIActionRowComponent<APIButtonComponent>[] = [];
  for (let i = 0; i < made.length; i += ROW_SIZE)
    rows.push({ type: ComponentType.ActionRow, components: made.slice(i, i + ROW_SIZE) });
  return rows;
}

/** Approve is green and Reject red; everything else is a plain grey option. */
function styleOf(buttonId: string): ButtonStyle.Success | ButtonStyle.Danger | ButtonStyle.Secondary {
  if (buttonId.startsWith("approve")) return ButtonStyle.Success;
  if (buttonId.startsWith("reject")) return ButtonStyle.Danger;
  return ButtonStyle.Secondary;
}
