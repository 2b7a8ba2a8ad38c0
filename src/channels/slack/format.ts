/**
 * The agent's Markdown → Slack mrkdwn, walking the token tree of `marked`'s lexer. Slack has no
 * headings, tables or nested emphasis, so those degrade to bold lines and code blocks.
 */
import { marked, type Token, type Tokens } from "marked";

/** Escapes the three characters Slack reserves for its own markup. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Converts Markdown to mrkdwn. */
export function toMrkdwn(markdown: string): string {
  const tokens = marked.lexer(markdown, { gfm: true });
  return blocks(tokens)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function blocks(tokens: Token[]): string {
  const out: string[] = [];
  for (const token of tokens) {
    const text = block(token);
    if (text !== undefined) out.push(text);
  }
  return out.join("\n\n");
}

function block(token: Token): string | undefined {
  switch (token.type) {
    case "space":
      return undefined;
    case "paragraph":
      return inline((token as Tokens.Paragraph).tokens);
    case "heading":
      return `*${inline((token as Tokens.Heading).tokens)}*`;
    case "code":
      return fence((token as Tokens.Code).text);
    case "blockquote":
      return blocks((token as Tokens.Blockquote).tokens)
        .split("\n")
        .map((line) => `> ${line}`)
        .join("\n");
    case "list":
      return list(token as Tokens.List, 0);
    case "hr":
      return "───";
    case "table":
      return fence((token as Tokens.Table).raw.trim());
    case "html":
      return escapeMrkdwn((token as Tokens.HTML).text.trim());
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens) : escapeMrkdwn(t.text);
    }
    default:
      return "raw" in token ? escapeMrkdwn(String(token.raw).trim()) : undefined;
  }
}

function fence(code: string): string {
  // A fence inside the code would end Slack's block early; a zero-width space defuses it.
  return `\`\`\`\n${escapeMrkdwn(code.replace(/```/g, "`\u200b``"))}\n\`\`\``;
}

function list(token: Tokens.List, depth: number): string {
  const indent = "    ".repeat(depth);
  const start = typeof token.start === "number" ? token.start : 1;
  return token.items
    .map((item, i) => {
      const bullet = token.ordered ? `${start + i}.` : "•";
      const check = item.task ? (item.checked ? "☑ " : "☐ ") : "";
      const parts: string[] = [];
      for (const child of item.tokens) {
        if (child.type === "list") parts.push(list(child as Tokens.List, depth + 1));
        else {
          const text = child.type === "checkbox" ? undefined : block(child);
          if (text) parts.push(parts.length === 0 ? `${indent}${bullet} ${check}${text}` : `${indent}    ${text}`);
        }
      }
      return parts.length > 0 ? parts.join("\n") : `${indent}${bullet} ${check}`.trimEnd();
    })
    .join("\n");
}

function inline(tokens: Token[] | undefined): string {
  if (!tokens) return "";
  return tokens.map(inlineOne).join("");
}

function inlineOne(token: Token): string {
  switch (token.type) {
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens) : escapeMrkdwn(t.text);
    }
    case "escape":
      return escapeMrkdwn((token as Tokens.Escape).text);
    case "strong":
      return wrap("*", inline((token as Tokens.Strong).tokens));
    case "em":
      return wrap("_", inline((token as Tokens.Em).tokens));
    case "del":
      return wrap("~", inline((token as Tokens.Del).tokens));
    case "codespan":
      return `\`${escapeMrkdwn((token as Tokens.Codespan).text)}\``;
    case "br":
      return "\n";
    case "link": {
      const l = token as Tokens.Link;
      const label = inline(l.tokens);
      return label && label !== escapeMrkdwn(l.href) ? `<${l.href}|${label}>` : `<${l.href}>`;
    }
    case "image": {
      const img = token as Tokens.Image;
      return img.text ? `<${img.href}|${escapeMrkdwn(img.text)}>` : `<${img.href}>`;
    }
    case "html":
      return escapeMrkdwn((token as Tokens.HTML).text);
    default:
      return "raw" in token ? escapeMrkdwn(String(token.raw)) : "";
  }
}

/** Slack ignores emphasis markers that touch whitespace, so keep the spaces outside them. */
function wrap(mark: string, text: string): string {
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(text);
  if (!m?.[2]) return text;
  return `${m[1]}${mark}${m[2]}${mark}${m[3]}`;
}
