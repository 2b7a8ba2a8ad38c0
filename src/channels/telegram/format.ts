/**
 * The agent's Markdown → Telegram HTML (parse_mode "HTML"), and → plain text for the retry
 * Telegram needs when it rejects our markup. Both walk the token tree of `marked`'s lexer.
 * Telegram HTML knows only b, i, s, u, code, pre, a, blockquote and tg-spoiler, so headings
 * become bold lines, lists become bullet lines and tables become preformatted rows.
 */
import { marked, type Token, type Tokens } from "marked";

type Mode = "html" | "plain";

/** Markdown → Telegram HTML. */
export function toTelegramHtml(markdown: string): string {
  return renderBlocks(marked.lexer(markdown), "html").trim();
}

/** Markdown → readable plain text, with the markup removed. */
export function toPlainText(markdown: string): string {
  return renderBlocks(marked.lexer(markdown), "plain").trim();
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function esc(text: string, mode: Mode): string {
  return mode === "html" ? escapeHtml(text) : text;
}

function wrap(tag: string, inner: string, mode: Mode): string {
  return mode === "html" ? `<${tag}>${inner}</${tag}>` : inner;
}

function renderBlocks(tokens: Token[], mode: Mode): string {
  const parts: string[] = [];
  for (const token of tokens) {
    const out = renderBlock(token, mode);
    if (out !== "") parts.push(out);
  }
  return parts.join("\n\n");
}

function renderBlock(token: Token, mode: Mode): string {
  switch (token.type) {
    case "space":
    case "def":
      return "";
    case "heading":
      return wrap("b", renderInline((token as Tokens.Heading).tokens, mode), mode);
    case "paragraph":
      return renderInline((token as Tokens.Paragraph).tokens, mode);
    case "code":
      return renderCode(token as Tokens.Code, mode);
    case "blockquote":
      return wrap("blockquote", renderBlocks((token as Tokens.Blockquote).tokens, mode), mode);
    case "list":
      return renderList(token as Tokens.List, mode, 0);
    case "table":
      return renderTable(token as Tokens.Table, mode);
    case "hr":
      return "──────────";
    case "html":
      return esc((token as Tokens.HTML).text.trim(), mode);
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? renderInline(t.tokens, mode) : esc(t.text, mode);
    }
    default:
      return "raw" in token && typeof token.raw === "string" ? esc(token.raw.trim(), mode) : "";
  }
}

function renderCode(token: Tokens.Code, mode: Mode): string {
  const text = token.text.replace(/\n+$/, "");
  if (mode === "plain") return text;
  const lang = token.lang?.trim().split(/\s+/)[0];
  const cls = lang && /^[\w+#.-]+$/.test(lang) ? ` class="language-${lang}"` : "";
  return `<pre><code${cls}>${escapeHtml(text)}</code></pre>`;
}

function renderList(list: Tokens.List, mode: Mode, depth: number): string {
  const indent = "  ".repeat(depth);
  const start = typeof list.start === "number" ? list.start : 1;
  return list.items
    .map((item, i) => {
      const marker = item.task ? (item.checked ? "☑" : "☐") : list.ordered ? `${start + i}.` : "•";
      const lines: string[] = [];
      for (const child of item.tokens) {
        if (child.type === "list") lines.push(renderList(child as Tokens.List, mode, depth + 1));
        else if (child.type !== "space" && child.type !== "checkbox") {
          const text = renderBlock(child, mode);
          if (text !== "") lines.push(lines.length === 0 ? `${indent}${marker} ${text}` : `${indent}  ${text}`);
        }
      }
      if (lines.length === 0) lines.push(`${indent}${marker}`);
      return lines.join("\n");
    })
    .join("\n");
}

function renderTable(table: Tokens.Table, mode: Mode): string {
  // Cells are rendered as plain text: tags are not allowed inside <pre>.
  const cell = (c: Tokens.TableCell) => renderInline(c.tokens, "plain");
  const rows = [table.header.map(cell), ...table.rows.map((r) => r.map(cell))];
  const body = rows.map((r) => r.join(" | ")).join("\n");
  return mode === "html" ? `<pre>${escapeHtml(body)}</pre>` : body;
}

function renderInline(tokens: Token[], mode: Mode): string {
  return tokens.map((t) => renderInlineToken(t, mode)).join("");
}

function renderInlineToken(token: Token, mode: Mode): string {
  switch (token.type) {
    case "strong":
      return wrap("b", renderInline((token as Tokens.Strong).tokens, mode), mode);
    case "em":
      return wrap("i", renderInline((token as Tokens.Em).tokens, mode), mode);
    case "del":
      return wrap("s", renderInline((token as Tokens.Del).tokens, mode), mode);
    case "codespan":
      return wrap("code", esc((token as Tokens.Codespan).text, mode), mode);
    case "br":
      return "\n";
    case "link":
      return renderLink(token as Tokens.Link, mode);
    case "image": {
      const img = token as Tokens.Image;
      return renderHref(img.href, esc(img.text || img.href, mode), mode);
    }
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? renderInline(t.tokens, mode) : esc(t.text, mode);
    }
    case "escape":
    case "html":
      return esc((token as Tokens.Escape | Tokens.Tag).text, mode);
    default:
      return "raw" in token && typeof token.raw === "string" ? esc(token.raw, mode) : "";
  }
}

function renderLink(link: Tokens.Link, mode: Mode): string {
  const label = renderInline(link.tokens, mode);
  if (mode === "plain" && label !== link.href && !link.href.startsWith("mailto:")) return `${label} (${link.href})`;
  return renderHref(link.href, label, mode);
}

/** Only schemes Telegram accepts become links; anything else stays as its label. */
function renderHref(href: string, label: string, mode: Mode): string {
  if (mode === "plain" || !/^(https?:|tg:|mailto:)/i.test(href)) return label;
  return `<a href="${escapeHtml(href).replace(/"/g, "&quot;")}">${label}</a>`;
}
