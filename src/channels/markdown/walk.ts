/**
 * The one Markdown renderer: a single walk over `marked`'s tokens that hands each piece to an
 * emitter (see `emitter.ts`). List numbering, task boxes, list layout, table cells and the blank
 * line between blocks are decided here once, for every platform.
 */
import { Lexer, type Token, type Tokens } from "marked";
import type { FullEmitter, ListItemInfo, MarkdownEmitter, TableInfo } from "./emitter.js";
import { plainEmitter } from "./plain.js";

const completed = new WeakMap<MarkdownEmitter, FullEmitter>([[plainEmitter, plainEmitter]]);

/** The emitter with the hooks it leaves out taken from {@link plainEmitter} (cached per emitter). */
export function fullEmitter(emitter: MarkdownEmitter): FullEmitter {
  let full = completed.get(emitter);
  if (!full) {
    // Inherits from the emitter, so its own hooks (also a class's) see its fields through `this`.
    const hooks = Object.create(emitter) as Record<string, unknown>;
    for (const [key, fallback] of Object.entries(plainEmitter)) hooks[key] ??= fallback;
    full = hooks as unknown as FullEmitter;
    completed.set(emitter, full);
  }
  return full;
}

/** Lexes Markdown the way every emitter sees it (GitHub-flavoured). */
export function lexMarkdown(markdown: string): Token[] {
  return Lexer.lex(markdown, { gfm: true });
}

/** The agent's Markdown in the emitter's dialect, without leading blank lines or trailing space. */
export function renderMarkdown(markdown: string, emitter: MarkdownEmitter): string {
  return renderTokens(lexMarkdown(markdown), emitter);
}

/** Like {@link renderMarkdown}, for tokens already lexed. */
export function renderTokens(tokens: Token[], emitter: MarkdownEmitter): string {
  return new Walk(fullEmitter(emitter))
    .blocks(tokens, 0)
    .replace(/^(?:[ \t]*\n)+/, "")
    .trimEnd();
}

class Walk {
  constructor(private readonly e: FullEmitter) {}

  blocks(tokens: Token[], depth: number, separator = "\n\n"): string {
    const out: string[] = [];
    for (const token of tokens) {
      const text = this.block(token, depth);
      if (text !== "") out.push(text);
    }
    return out.join(separator);
  }

  private block(token: Token, depth: number): string {
    const { e } = this;
    switch (token.type) {
      case "space":
      case "def":
      case "checkbox":
        return "";
      case "heading":
        return e.heading(this.inline((token as Tokens.Heading).tokens), (token as Tokens.Heading).depth);
      case "paragraph":
        return e.paragraph(this.inline((token as Tokens.Paragraph).tokens));
      case "text": {
        const t = token as Tokens.Text;
        return t.tokens ? this.inline(t.tokens) : this.literal(t.text);
      }
      case "code": {
        const t = token as Tokens.Code;
        const lang = t.lang?.trim().split(/\s+/)[0];
        return e.code(t.text.replace(/\n+$/, ""), lang || undefined);
      }
      case "blockquote":
        return e.blockquote(this.blocks((token as Tokens.Blockquote).tokens, depth));
      case "list":
        return this.list(token as Tokens.List, depth);
      case "table":
        return e.table(this.table(token as Tokens.Table));
      case "hr":
        return e.hr();
      case "html":
        return e.text((token as Tokens.HTML).text.trim());
      default:
        return "raw" in token && typeof token.raw === "string" ? e.text(token.raw.trim()) : "";
    }
  }

  private list(list: Tokens.List, depth: number): string {
    const start = typeof list.start === "number" ? list.start : 1;
    const items = list.items.map((item, i) => ({
      token: item,
      info: { ordered: list.ordered, number: start + i, task: item.task, checked: item.checked === true, depth },
    }));
    if (this.e.list) return this.e.list(items.map(({ token, info }) => ({ inner: this.blocksOf(token, info), item: info })));
    return items.map(({ token, info }) => this.item(token, info)).join("\n");
  }

  /** An item's blocks, nested lists included, without its marker. */
  private blocksOf(item: Tokens.ListItem, info: ListItemInfo): string {
    const separator = item.loose && this.e.looseItems ? "\n\n" : "\n";
    const parts: string[] = [];
    for (const child of item.tokens) {
      const text = child.type === "list" ? this.list(child as Tokens.List, info.depth + 1) : this.block(child, info.depth);
      if (text !== "") parts.push(text);
    }
    return parts.join(separator);
  }

  /** The marker, then the item's blocks; further lines are indented under it. */
  private item(item: Tokens.ListItem, info: ListItemInfo): string {
    const { e } = this;
    const marker = e.listMarker(info);
    const inner = this.blocksOf(item, info);
    if (inner === "") return marker;
    const indent = e.listIndent(info);
    const [first, ...rest] = inner.split("\n");
    return [`${marker} ${first}`, ...rest.map((line) => (line === "" ? "" : indent + line))].join("\n");
  }

  private table(table: Tokens.Table): TableInfo {
    const plain = this.e === plainEmitter ? this : new Walk(plainEmitter);
    const cells = (walk: Walk, row: Tokens.TableCell[]) => row.map((cell) => walk.inline(cell.tokens));
    return {
      header: cells(this, table.header),
      rows: table.rows.map((row) => cells(this, row)),
      plain: { header: cells(plain, table.header), rows: table.rows.map((row) => cells(plain, row)) },
      align: table.align,
      raw: table.raw.trim(),
    };
  }

  /** Source text, with character references decoded unless the emitter keeps them. */
  private literal(text: string): string {
    return this.e.text(this.e.keepEntities ? text : decodeEntities(text));
  }

  inline(tokens: Token[] | undefined): string {
    if (!tokens) return "";
    let out = "";
    for (const token of tokens) out += this.inlineOne(token);
    return out;
  }

  private inlineOne(token: Token): string {
    const { e } = this;
    switch (token.type) {
      case "text": {
        const t = token as Tokens.Text;
        return t.tokens ? this.inline(t.tokens) : this.literal(t.text);
      }
      case "escape":
        return e.escape((token as Tokens.Escape).text);
      case "strong":
        return e.strong(this.inline((token as Tokens.Strong).tokens));
      case "em":
        return e.em(this.inline((token as Tokens.Em).tokens));
      case "del":
        return e.del(this.inline((token as Tokens.Del).tokens));
      case "codespan":
        return e.codespan((token as Tokens.Codespan).text);
      case "br":
        return e.br();
      case "link": {
        const t = token as Tokens.Link;
        const plainLabel = new Walk(plainEmitter).inline(t.tokens);
        return e.link({ href: t.href, label: this.inline(t.tokens), plainLabel });
      }
      case "image": {
        const t = token as Tokens.Image;
        const alt = this.e.keepEntities ? t.text : decodeEntities(t.text);
        return e.image({ href: t.href, label: alt ? this.literal(t.text) : "", plainLabel: alt });
      }
      case "html":
        return e.text((token as Tokens.Tag).text);
      case "checkbox":
        return "";
      default:
        return "raw" in token && typeof token.raw === "string" ? e.text(token.raw) : "";
    }
  }
}

/** The named references models actually write; others stay as written. */
const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  copy: "©",
  reg: "®",
  trade: "™",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  laquo: "«",
  raquo: "»",
  middot: "·",
  times: "×",
  deg: "°",
  euro: "€",
};

/** Decodes character references as CommonMark would show them. */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));/g, (ref, dec, hex, name) => {
    if (name !== undefined) return NAMED[name] ?? ref;
    const code = Number.parseInt(dec ?? hex, dec ? 10 : 16);
    // Invalid code points become the replacement character, as in CommonMark.
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : "\ufffd";
  });
}
