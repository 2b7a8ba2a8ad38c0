/**
 * Discord's Markdown as a person reads it: the text left once the client has drawn bold,
 * italics, underline, strike, spoilers, code, quotes, headings and subtext. List markers stay as
 * written (Discord shows them as bullets and numbers), masked links show their label, and
 * `<@id>` mentions show as `@name`. Backslash escapes show the character they escape.
 */

export interface ReadOptions {
  /** Display name for a user id (`<@id>`); unknown ids read "@unknown-user", as in the client. */
  userName?: (id: string) => string | undefined;
  channelName?: (id: string) => string | undefined;
}

/** Placeholders in the private use area keep finished pieces out of later rules. */
const OPEN = "\uE000";
const CLOSE = "\uE001";

class Slots {
  private readonly items: string[] = [];
  put(text: string): string {
    this.items.push(text);
    return `${OPEN}${this.items.length - 1}${CLOSE}`;
  }
  restore(text: string): string {
    const pattern = new RegExp(`${OPEN}(\\d+)${CLOSE}`, "g");
    let out = text;
    for (let i = 0; i < 5 && pattern.test(out); i++) out = out.replace(pattern, (_, n) => this.items[Number(n)] ?? "");
    return out;
  }
}

/** The plain text a person reads in a message with this content. */
export function readMarkdown(content: string, options: ReadOptions = {}): string {
  const slots = new Slots();
  let text = content.replace(/```(?:([\w+#.-]+)\n)?\n?([\s\S]*?)\n?```/g, (_, _lang, code: string) => slots.put(code));
  // An escaped backtick (`\``) opens no code span: the client reads left to right, escapes first.
  text = text.replace(/(?<!\\)``(?!`)([\s\S]+?)``|(?<!\\)`([^`]+)`/g, (_, a: string | undefined, b: string | undefined) =>
    slots.put(a !== undefined ? a.replace(/^ (.*) $/s, "$1") : (b as string)),
  );
  text = text.replace(/\\([^\p{L}\p{N}\s])/gu, (_, ch: string) => slots.put(ch));
  text = readBlocks(text);
  text = readEntities(text, slots, options);
  text = readInline(text);
  return slots.restore(text);
}

/** Quotes, headings and subtext lose their markers; list markers stay. */
function readBlocks(text: string): string {
  const lines = text.split("\n");
  let quotedRest = false;
  return lines
    .map((line) => {
      let l = line;
      if (!quotedRest && /^>>> /.test(l)) {
        quotedRest = true;
        l = l.slice(4);
      } else if (!quotedRest && /^> /.test(l)) l = l.slice(2);
      else if (!quotedRest && l === ">") l = "";
      return l.replace(/^(#{1,3}|-#) (?=\S)/, "");
    })
    .join("\n");
}

/** Links, mentions, custom emoji and timestamps, each replaced by what the client draws. */
function readEntities(text: string, slots: Slots, options: ReadOptions): string {
  return text
    .replace(/\[([^\]\n]+)\]\(<?(https?:\/\/[^\s)>]+)>?\)/g, (_, label: string) => slots.put(readInline(label)))
    .replace(/<(https?:\/\/[^\s>]+)>/g, (_, url: string) => slots.put(url))
    .replace(/https?:\/\/[^\s<]+[^\s<.,:;"')\]!?]/g, (url) => slots.put(url))
    .replace(/<@!?(\d+)>/g, (_, id: string) => slots.put(`@${options.userName?.(id) ?? "unknown-user"}`))
    .replace(/<#(\d+)>/g, (_, id: string) => slots.put(`#${options.channelName?.(id) ?? "unknown"}`))
    .replace(/<@&(\d+)>/g, () => slots.put("@role"))
    .replace(/<a?:(\w+):\d+>/g, (_, name: string) => slots.put(`:${name}:`))
    .replace(/<t:(-?\d+)(?::[tTdDfFR])?>/g, (_, s: string) => slots.put(new Date(Number(s) * 1000).toISOString()));
}

const INLINE: Array<[RegExp, string]> = [
  [/\*\*(?=\S)([\s\S]*?\S)\*\*(?!\*)/g, "$1"],
  [/__(?=\S)([\s\S]*?\S)__(?!_)/g, "$1"],
  [/~~(?=\S)([\s\S]*?\S)~~/g, "$1"],
  [/\|\|([\s\S]+?)\|\|/g, "$1"],
  [/(?<![\w*])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![\w*])/g, "$1"],
  [/(?<![\p{L}\p{N}_])_(?=[^\s_])([^_\n]*?[^\s_])_(?![\p{L}\p{N}_])/gu, "$1"],
];

/** Emphasis markers go; applied until nothing changes, so nested styles unwrap too. */
function readInline(text: string): string {
  let out = text;
  for (let before = ""; before !== out; ) {
    before = out;
    for (const [pattern, replacement] of INLINE) out = out.replace(pattern, replacement);
  }
  return out;
}
