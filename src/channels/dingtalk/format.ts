/**
 * The agent's Markdown → DingTalk's markdown subset. DingTalk renders headings, bold, italic,
 * links, images, lists, quotes and rules; it has no code blocks, inline code, strikethrough or
 * tables, so those degrade to readable text: code blocks become quoted lines (indentation kept
 * with no-break spaces), tables become one line per row, `code` and ~~del~~ lose their marks.
 */
import { lexer, type Token, type Tokens } from "marked";

/** A hard line break: DingTalk folds single newlines inside a block. */
const BREAK = "  \n";
const NBSP = "\u00a0";

export function toDingTalkMarkdown(markdown: string): string {
  return blocks(lexer(markdown)).trim();
}

/** A short plain title for markdown messages (shown in notifications and the chat list). */
export function markdownTitle(markdown: string, max = 24): string {
  const line =
    plainText(markdown)
      .split("\n")
      .find((l) => l.trim() !== "") ?? "";
  const title = line.trim();
  return title.length > max ? `${title.slice(0, max - 1)}…` : title || "reply";
}

/** The text a reader sees, without any markup (for titles and logs). */
export function plainText(markdown: string): string {
  return lexer(markdown)
    .map((t) => plainOf(t))
    .filter((s) => s !== "")
    .join("\n");
}

function plainOf(token: Token): string {
  const t = token as Tokens.Generic;
  if (t.type === "code" || t.type === "codespan" || t.type === "escape") return String(t.text);
  if (t.type === "space" || t.type === "hr") return "";
  if (t.type === "list") return (t as Tokens.List).items.map((i) => plainOf(i)).join("\n");
  if (t.type === "list_item") return (t.tokens ?? []).map((c) => plainOf(c)).join("\n");
  if (t.type === "table") return tableLines(t as Tokens.Table, (c) => inlinePlain(c.tokens)).join("\n");
  if (t.tokens) return inlinePlain(t.tokens);
  return String(t.text ?? "");
}

function inlinePlain(tokens: Token[]): string {
  return tokens.map((t) => plainOf(t)).join("");
}

function blocks(tokens: Token[]): string {
  return tokens
    .map((t) => block(t))
    .filter((s) => s !== "")
    .join("\n\n");
}

function block(token: Token): string {
  const t = token as Tokens.Generic;
  switch (t.type) {
    case "heading":
      return `${"#".repeat(Math.min(t.depth as number, 6))} ${inline(t.tokens ?? [])}`;
    case "paragraph":
      return inline(t.tokens ?? []);
    case "code":
      return codeBlock(t as Tokens.Code);
    case "table":
      return tableLines(t as Tokens.Table, (c) => inline(c.tokens)).join(BREAK);
    case "list":
      return list(t as Tokens.List, 0);
    case "blockquote":
      return quote(blocks(t.tokens ?? []));
    case "hr":
      return "---";
    case "space":
    case "def":
    case "checkbox":
      return "";
    case "text":
      return t.tokens ? inline(t.tokens) : String(t.text);
    default:
      return String(t.raw ?? "").trim();
  }
}

function codeBlock(token: Tokens.Code): string {
  const lines = token.text.replace(/\n+$/, "").split("\n");
  const label = token.lang ? [`${token.lang}:`] : [];
  const kept = lines.map((l) => l.replace(/^ +/, (s) => NBSP.repeat(s.length)) || NBSP);
  return quote([...label, ...kept].join(BREAK));
}

function quote(text: string): string {
  return text
    .split("\n")
    .map((l) => `> ${l}`)
    .join("\n");
}

function tableLines(token: Tokens.Table, cell: (c: Tokens.TableCell) => string): string[] {
  const head = token.header.map(cell);
  const rows = token.rows.map((row) => row.map((c, i) => (head[i] ? `${head[i]}: ${cell(c)}` : cell(c))).join(", "));
  return rows.length > 0 ? rows : [head.join(", ")];
}

function list(token: Tokens.List, depth: number): string {
  const indent = "    ".repeat(depth);
  const start = typeof token.start === "number" ? token.start : 1;
  return token.items
    .map((item, i) => {
      const marker = token.ordered ? `${start + i}.` : "-";
      const parts = item.tokens.map((t) => (t.type === "list" ? `\n${list(t as Tokens.List, depth + 1)}` : block(t)));
      const check = item.task ? (item.checked ? "☑ " : "☐ ") : "";
      return `${indent}${marker} ${check}${parts.join("").trim()}`;
    })
    .join("\n");
}

function inline(tokens: Token[]): string {
  return tokens.map((t) => inlineOne(t)).join("");
}

function inlineOne(token: Token): string {
  const t = token as Tokens.Generic;
  switch (t.type) {
    case "strong":
      return `**${inline(t.tokens ?? [])}**`;
    case "em":
      return `*${inline(t.tokens ?? [])}*`;
    case "codespan":
    case "escape":
      return String(t.text);
    case "del":
      return inline(t.tokens ?? []);
    case "link":
      return `[${inline(t.tokens ?? [])}](${t.href})`;
    case "image":
      return `![${t.text}](${t.href})`;
    case "br":
      return BREAK;
    case "checkbox":
      return "";
    case "text":
      return t.tokens ? inline(t.tokens) : String(t.text);
    default:
      return String(t.raw ?? "");
  }
}
