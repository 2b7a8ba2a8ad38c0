/**
 * Telegram's HTML parse mode as the fake enforces it: only the documented tags, properly
 * nested, `<>&` escaped. Produces the plain text a user reads and its entities, and fails with
 * the Bot API's own "can't parse entities" wording.
 */

export interface FakeEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
}

export interface ParsedText {
  text: string;
  entities: FakeEntity[];
}

export class HtmlParseError extends Error {}

const TAGS: Record<string, string> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  "tg-spoiler": "spoiler",
  span: "spoiler",
  a: "text_link",
  code: "code",
  pre: "pre",
  blockquote: "blockquote",
  "tg-emoji": "custom_emoji",
};

const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

interface Open {
  tag: string;
  start: number;
  attrs: Record<string, string>;
}

function byteOffset(html: string, index: number): number {
  return Buffer.byteLength(html.slice(0, index), "utf8");
}

function fail(message: string): never {
  throw new HtmlParseError(`Bad Request: can't parse entities: ${message}`);
}

export function parseHtml(html: string): ParsedText {
  let text = "";
  const entities: FakeEntity[] = [];
  const stack: Open[] = [];
  let i = 0;
  while (i < html.length) {
    const ch = html[i] as string;
    if (ch === "&") {
      const end = html.indexOf(";", i);
      const name = end > i ? html.slice(i + 1, end) : "";
      const decoded = decodeEntity(name);
      if (end < 0 || decoded === undefined) fail(`Can't find end of the entity starting at byte offset ${byteOffset(html, i)}`);
      text += decoded;
      i = end + 1;
    } else if (ch === "<") {
      const end = html.indexOf(">", i);
      if (end < 0) fail(`Unclosed start tag at byte offset ${byteOffset(html, i)}`);
      const inner = html.slice(i + 1, end);
      if (inner.startsWith("/")) closeTag(inner.slice(1).trim().toLowerCase(), stack, entities, text, byteOffset(html, i));
      else stack.push(openTag(inner, text.length, byteOffset(html, i)));
      i = end + 1;
    } else if (ch === ">") {
      text += ">";
      i++;
    } else {
      text += ch;
      i++;
    }
  }
  const unclosed = stack.pop();
  if (unclosed) fail(`Can't find end tag corresponding to start tag "${unclosed.tag}"`);
  return trimParsed(text, entities);
}

function decodeEntity(name: string): string | undefined {
  if (name.startsWith("#x") || name.startsWith("#X")) {
    const code = Number.parseInt(name.slice(2), 16);
    return Number.isFinite(code) ? String.fromCodePoint(code) : undefined;
  }
  if (name.startsWith("#")) {
    const code = Number.parseInt(name.slice(1), 10);
    return Number.isFinite(code) ? String.fromCodePoint(code) : undefined;
  }
  return NAMED[name];
}

function openTag(inner: string, at: number, byte: number): Open {
  const match = /^([a-zA-Z][\w-]*)((?:\s+[\w-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*$/.exec(inner);
  const tag = match?.[1]?.toLowerCase() ?? "";
  if (!match || !(tag in TAGS)) fail(`Unsupported start tag "${tag}" at byte offset ${byte}`);
  const attrs: Record<string, string> = {};
  for (const a of (match[2] ?? "").matchAll(/([\w-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g)) {
    attrs[(a[1] as string).toLowerCase()] = (a[2] ?? a[3] ?? a[4] ?? "").replace(/&quot;/g, '"').replace(/&amp;/g, "&");
  }
  if (tag === "span" && attrs.class !== "tg-spoiler") fail(`Tag "span" must have class "tg-spoiler" at byte offset ${byte}`);
  return { tag, start: at, attrs };
}

function closeTag(tag: string, stack: Open[], entities: FakeEntity[], text: string, byte: number): void {
  const top = stack.pop();
  if (!top) fail(`Unexpected end tag at byte offset ${byte}`);
  if (top.tag !== tag) fail(`Can't find end tag corresponding to start tag "${top.tag}"`);
  const length = text.length - top.start;
  if (length === 0) return;
  const type = TAGS[tag] as string;
  const entity: FakeEntity = { type, offset: top.start, length };
  if (tag === "a") entity.url = top.attrs.href ?? "";
  if (tag === "code" && top.attrs.class?.startsWith("language-")) entity.language = top.attrs.class.slice(9);
  entities.push(entity);
}

/** Telegram trims leading and trailing whitespace of a message and shifts entities to match. */
function trimParsed(text: string, entities: FakeEntity[]): ParsedText {
  const lead = text.length - text.trimStart().length;
  const trimmed = text.trim();
  const out = entities
    .map((e) => {
      const start = Math.max(0, e.offset - lead);
      const end = Math.min(trimmed.length, e.offset + e.length - lead);
      return { ...e, offset: start, length: end - start };
    })
    .filter((e) => e.length > 0)
    .sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { text: trimmed, entities: out };
}

/** Plain text is taken as it is (only trimmed), with no entities. */
export function parsePlain(text: string): ParsedText {
  return { text: text.trim(), entities: [] };
}
