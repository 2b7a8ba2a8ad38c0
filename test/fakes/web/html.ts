/**
 * The page sets a message's `html` with `innerHTML`; this module reads that HTML the way a person
 * sees it, and checks it the way the page's rules demand. `htmlText` is close to the browser's
 * `innerText` under `white-space: pre-wrap`, which the server's emitter counts on (its blocks are
 * separated by the Markdown renderer's own newlines): text keeps its spaces and line breaks, a
 * block element (`<pre>`, `<blockquote>`, a table row) starts and ends on a line of its own,
 * table cells are separated by a tab, `<li>` items (should the emitter ever write them) get their
 * bullet or number, entities are decoded, and blank lines at either end are not seen. `htmlProblems` lists what the README forbids: tags beyond Markdown's, event handler
 * attributes, links other than http, https and mailto, and remote images.
 */

/** Block elements, and the line breaks that set them apart (a paragraph is followed by a blank line). */
const BLOCKS: Record<string, number> = {
  p: 2,
  pre: 1,
  blockquote: 1,
  h1: 1,
  h2: 1,
  h3: 1,
  h4: 1,
  h5: 1,
  h6: 1,
  ul: 1,
  ol: 1,
  li: 1,
  div: 1,
  table: 1,
  thead: 1,
  tbody: 1,
  tr: 1,
  hr: 1,
};

/** Tags a Markdown renderer may emit; anything else is a problem. */
const ALLOWED = new Set([
  ...Object.keys(BLOCKS),
  "br",
  "strong",
  "b",
  "em",
  "i",
  "s",
  "del",
  "code",
  "a",
  "span",
  "th",
  "td",
  "img",
  "input",
  "sup",
  "sub",
]);

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** Tags, comments and text, in order. */
const TOKEN =
  /<!--[\s\S]*?-->|<(\/?)([A-Za-z][A-Za-z0-9]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*(\/?)>/g;
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z]+);/g, (whole, name: string) => {
    if (name.startsWith("#x") || name.startsWith("#X")) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith("#")) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

interface Token {
  kind: "open" | "close" | "text";
  name: string;
  attributes: Record<string, string>;
  text: string;
}

function tokens(html: string): Token[] {
  const out: Token[] = [];
  let at = 0;
  for (const m of html.matchAll(TOKEN)) {
    if (m.index > at) out.push({ kind: "text", name: "", attributes: {}, text: html.slice(at, m.index) });
    at = m.index + m[0].length;
    if (m[0].startsWith("<!--")) continue;
    const name = (m[2] ?? "").toLowerCase();
    out.push({ kind: m[1] ? "close" : "open", name, attributes: attributesOf(m[3] ?? ""), text: m[0] });
  }
  if (at < html.length) out.push({ kind: "text", name: "", attributes: {}, text: html.slice(at) });
  return out;
}

function attributesOf(source: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const m of source.matchAll(ATTRIBUTE)) {
    attributes[(m[1] ?? "").toLowerCase()] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? "");
  }
  return attributes;
}

/** What a person reads in `html`. */
export function htmlText(html: string): string {
  const out = new TextOut();
  const lists: Array<{ ordered: boolean; next: number }> = [];
  for (const token of tokens(html)) {
    if (token.kind === "text") {
      out.text(decodeEntities(token.text));
      continue;
    }
    const { name } = token;
    if (name === "br") out.lineBreak();
    if (name === "ul" || name === "ol") {
      if (token.kind === "open") lists.push({ ordered: name === "ol", next: Number(token.attributes.start ?? 1) || 1 });
      else lists.pop();
    }
    if (name === "td" || name === "th") {
      if (token.kind === "open") out.cell();
    }
    const breaks = BLOCKS[name];
    if (breaks !== undefined) out.block(breaks);
    if (name === "li" && token.kind === "open") {
      const list = lists.at(-1);
      out.marker(list?.ordered ? `${list.next++}. ` : "• ");
    }
    if (name === "img" && token.kind === "open") out.text(token.attributes.alt ?? "");
    if (name === "input" && token.kind === "open" && token.attributes.type === "checkbox") {
      out.marker("checked" in token.attributes ? "☑ " : "☐ ");
    }
  }
  return out.done();
}

/** Builds text the way `pre-wrap` lays it out: spaces kept, blocks on lines of their own, no blank ends. */
class TextOut {
  private result = "";
  private pendingBreaks = 0;
  private pendingCell = false;

  text(text: string): void {
    if (text === "") return;
    this.flush();
    this.result += text;
  }

  marker(text: string): void {
    this.flush();
    this.result += text;
  }

  lineBreak(): void {
    this.flush();
    this.result += "\n";
  }

  block(breaks: number): void {
    if (this.result !== "") this.pendingBreaks = Math.max(this.pendingBreaks, breaks);
  }

  cell(): void {
    if (!this.atLineStart()) this.pendingCell = true;
  }

  done(): string {
    return this.result.replace(/^\n+|\n+$/g, "");
  }

  private atLineStart(): boolean {
    return this.result === "" || this.result.endsWith("\n") || this.pendingBreaks > 0;
  }

  private flush(): void {
    if (this.pendingBreaks > 0) {
      const have = /\n*$/.exec(this.result)?.[0].length ?? 0;
      this.result += "\n".repeat(Math.max(0, this.pendingBreaks - have));
      this.pendingBreaks = 0;
      this.pendingCell = false;
    }
    if (this.pendingCell) {
      this.result += "\t";
      this.pendingCell = false;
    }
  }
}

/** What the page must never be given to `innerHTML`; empty when the HTML is safe. */
export function htmlProblems(html: string): string[] {
  const problems: string[] = [];
  for (const token of tokens(html)) {
    if (token.kind !== "open") continue;
    if (!ALLOWED.has(token.name)) problems.push(`tag <${token.name}>: ${token.text}`);
    for (const [name, value] of Object.entries(token.attributes)) {
      if (name.startsWith("on") || name === "srcdoc" || name === "formaction") problems.push(`attribute ${name}: ${token.text}`);
      // A browser drops control characters and spaces in a URL's scheme ("java\tscript:"), so they go first.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
      if (name === "href" && !/^(https?|mailto):/i.test(value.replace(/[\u0000-\u0020]/g, "")))
        problems.push(`link to ${value}: ${token.text}`);
      if (name === "src" && (token.name !== "img" || !value.startsWith("data:image/")))
        problems.push(`remote source ${value}: ${token.text}`);
    }
  }
  return problems;
}
