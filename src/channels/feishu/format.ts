/**
 * The agent's Markdown → what Feishu shows. Cards (JSON 2.0 `markdown` elements) render most
 * CommonMark, but not raw HTML or external images, so the text is re-serialised from `marked`'s
 * tokens with those parts rewritten. Plain text is the last-resort fallback (msg_type `text`).
 */
import { Lexer, type Token, type Tokens } from "marked";

type Style = "card" | "plain";

/** Markdown for a card's `markdown` element. */
export function toCardMarkdown(markdown: string): string {
  return render(markdown, "card");
}

/** Readable plain text with the markup removed, for `text` messages. */
export function toPlainText(markdown: string): string {
  return render(markdown, "plain");
}

function render(markdown: string, style: Style): string {
  const tokens = new Lexer({ gfm: true }).lex(markdown);
  return blocks(tokens, style)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function blocks(tokens: Token[], style: Style, separator = "\n\n"): string {
  const out: string[] = [];
  for (const token of tokens) {
    const text = block(token, style);
    if (text !== undefined) out.push(text);
  }
  return out.join(separator);
}

function block(token: Token, style: Style): string | undefined {
  switch (token.type) {
    case "space":
      return undefined;
    case "heading": {
      const t = token as Tokens.Heading;
      const text = inline(t.tokens, style);
      return style === "card" ? `${"#".repeat(Math.min(t.depth, 6))} ${text}` : text;
    }
    case "paragraph":
      return inline((token as Tokens.Paragraph).tokens, style);
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens, style) : text(t.text, style);
    }
    case "code": {
      const t = token as Tokens.Code;
      return style === "card" ? `\`\`\`${t.lang ?? ""}\n${t.text}\n\`\`\`` : t.text;
    }
    case "blockquote":
      return prefixLines(blocks((token as Tokens.Blockquote).tokens, style), "> ");
    case "list":
      return list(token as Tokens.List, style);
    case "table":
      return table(token as Tokens.Table, style);
    case "hr":
      return style === "card" ? "---" : "──────────";
    case "html":
      return text((token as Tokens.HTML).text.trim(), style);
    default:
      return "raw" in token ? text(String(token.raw).trim(), style) : undefined;
  }
}

function list(token: Tokens.List, style: Style): string {
  const start = typeof token.start === "number" ? token.start : 1;
  return token.items
    .map((item, i) => {
      const marker = token.ordered ? `${start + i}. ` : "- ";
      const box = item.task ? (item.checked ? "[x] " : "[ ] ") : "";
      const parts = item.tokens.filter((t) => t.type !== "checkbox");
      const body = blocks(parts, style, item.loose ? "\n\n" : "\n");
      // Nested blocks line up under the item's text.
      const indented = body.replace(/\n(?=[^\n])/g, `\n${" ".repeat(marker.length)}`);
      return `${marker}${box}${indented}`;
    })
    .join("\n");
}

function table(token: Tokens.Table, style: Style): string {
  const cell = (c: Tokens.TableCell) => inline(c.tokens, style).replace(/\|/g, "\\|");
  const row = (cells: Tokens.TableCell[]) =>
    style === "card" ? `| ${cells.map(cell).join(" | ")} |` : cells.map(cell).join(" | ");
  const lines = [row(token.header)];
  if (style === "card") lines.push(`|${token.header.map(() => " --- ").join("|")}|`);
  for (const r of token.rows) lines.push(row(r));
  return lines.join("\n");
}

function inline(tokens: Token[] | undefined, style: Style): string {
  if (!tokens) return "";
  return tokens.map((t) => inlineToken(t, style)).join("");
}

function inlineToken(token: Token, style: Style): string {
  const card = style === "card";
  switch (token.type) {
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens, style) : text(t.text, style);
    }
    case "strong":
      return wrap(inline((token as Tokens.Strong).tokens, style), card ? "**" : "");
    case "em":
      return wrap(inline((token as Tokens.Em).tokens, style), card ? "*" : "");
    case "del":
      return wrap(inline((token as Tokens.Del).tokens, style), card ? "~~" : "");
    case "codespan":
      return card ? `\`${(token as Tokens.Codespan).text}\`` : (token as Tokens.Codespan).text;
    case "br":
      return "\n";
    case "escape":
      return card ? `\\${(token as Tokens.Escape).text}` : (token as Tokens.Escape).text;
    case "link": {
      const t = token as Tokens.Link;
      const label = inline(t.tokens, style);
      if (card) return `[${label}](${t.href})`;
      return label === t.href || label === "" ? t.href : `${label} (${t.href})`;
    }
    case "image": {
      // Cards show only uploaded images (image_key); an external image becomes its link.
      const t = token as Tokens.Image;
      const label = t.text || "image";
      return card ? `[${label}](${t.href})` : `${label} (${t.href})`;
    }
    case "html":
      return text((token as Tokens.HTML).text, style);
    default:
      return "raw" in token ? text(String(token.raw), style) : "";
  }
}

/** Card markdown treats `<…>` as its own tags (`<at>`, `<font>`), so literal angle brackets are escaped. */
function text(value: string, style: Style): string {
  return style === "card" ? value.replace(/</g, "&lt;").replace(/>/g, "&gt;") : value;
}

function wrap(value: string, mark: string): string {
  return value === "" ? "" : `${mark}${value}${mark}`;
}

function prefixLines(value: string, prefix: string): string {
  return value
    .split("\n")
    .map((line) => `${prefix}${line}`)
    .join("\n");
}
