/**
 * Slack's mrkdwn as the fake reads it. Slack never rejects mrkdwn; it shows a stray `&` or `<`
 * as something else (an entity, a link, a mention), so `parseMrkdwn` reports what Slack would
 * misread, and gives the text a person sees. A bare `>` is shown as it is, so it passes.
 */

/** chat.update refuses `text` longer than this (`msg_too_long`); the core keeps every message under it. */
export const SLACK_UPDATE_TEXT_MAX = 4000;

export class MrkdwnError extends Error {}

const ENTITY = /^&(amp|lt|gt);/;
const DECODED: Record<string, string> = { amp: "&", lt: "<", gt: ">" };
/** What may stand between `<` and `>`: a link (with a label), a user, a channel or a special mention. */
const ANGLE = /^<((?:https?|mailto|tel):[^<>|\s]+(?:\|[^<>]*)?|@[UW][A-Z0-9]+|#C[A-Z0-9]+(?:\|[^<>]*)?|![a-z]+(?:\^[^<>]*)?)>/;

/**
 * `*bold*`, `_italic_` and `~strike~` within a line, not touching spaces inside, nor letters or
 * digits outside. (Slack does not document how CJK neighbours count; here they are boundaries.)
 */
const EMPHASIS = /(?<![A-Za-z0-9*_~])([*_~])(?=\S)([^\n]*?\S)\1(?![A-Za-z0-9*_~])/g;

/** Removes emphasis markers outside code, as Slack shows formatted text. */
function stripEmphasis(text: string): string {
  return text
    .split(/(```[\s\S]*?```|`[^`\n]+`)/)
    .map((part, i) => {
      if (i % 2 === 1) return part.replace(/^`+|`+$/g, "");
      let out = part;
      for (let before = ""; before !== out; ) {
        before = out;
        out = out.replace(EMPHASIS, "$2");
      }
      return out;
    })
    .join("");
}

/** The text a person reads; throws `MrkdwnError` where Slack would misread the markup. */
export function parseMrkdwn(mrkdwn: string): { text: string } {
  const text = stripEmphasis(mrkdwn);
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === "&") {
      const m = ENTITY.exec(text.slice(i, i + 5));
      if (!m) throw new MrkdwnError(`unescaped & at ${i}: ${JSON.stringify(text.slice(i, i + 12))}`);
      out += DECODED[m[1] as string];
      i += m[0].length;
    } else if (ch === "<") {
      const m = ANGLE.exec(text.slice(i));
      if (!m) throw new MrkdwnError(`unescaped < at ${i}: ${JSON.stringify(text.slice(i, i + 20))}`);
      const inner = m[1] as string;
      const bar = inner.indexOf("|");
      out += bar >= 0 ? inner.slice(bar + 1) : inner;
      i += m[0].length;
    } else {
      out += ch;
      i++;
    }
  }
  return { text: out };
}
