/**
 * Telegram's emitter: the agent's Markdown as Telegram HTML (parse_mode "HTML"). Telegram knows
 * only b, i, s, u, code, pre, a, blockquote and tg-spoiler, so headings become bold lines, lists
 * keep the plain bullets and tables become preformatted rows. When Telegram rejects the markup,
 * the adapter resends the shared plain text.
 */
import { type MarkdownEmitter, plainEmitter, renderMarkdown, tableLines } from "../markdown/index.js";

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Only schemes Telegram accepts become links; anything else stays as its label. */
const LINKABLE = /^(https?:|tg:|mailto:)/i;

export const telegramEmitter: MarkdownEmitter = {
  name: "telegram-html",
  text: escapeHtml,
  strong: (inner) => `<b>${inner}</b>`,
  em: (inner) => `<i>${inner}</i>`,
  del: (inner) => `<s>${inner}</s>`,
  codespan: (code) => `<code>${escapeHtml(code)}</code>`,
  link: ({ href, label }) => anchor(href, label || escapeHtml(href)),
  image: ({ href, label }) => anchor(href, label || escapeHtml(href)),
  heading: (inner) => `<b>${inner}</b>`,
  code(code, lang) {
    const cls = lang && /^[\w+#.-]+$/.test(lang) ? ` class="language-${lang}"` : "";
    return `<pre><code${cls}>${escapeHtml(code)}</code></pre>`;
  },
  blockquote: (inner) => `<blockquote>${inner}</blockquote>`,
  // Cells as plain text: tags are not allowed inside <pre>.
  table: (table) => `<pre>${escapeHtml(tableLines(table.plain).join("\n"))}</pre>`,
  // Telegram counts the text after parsing entities; the plain retry must fit as well.
  measure: (html, markdown) => Math.max(visibleLength(html), toPlainText(markdown).length),
};

function anchor(href: string, label: string): string {
  return LINKABLE.test(href) ? `<a href="${escapeHtml(href).replace(/"/g, "&quot;")}">${label}</a>` : label;
}

/** Markdown → Telegram HTML. */
export function toTelegramHtml(markdown: string): string {
  return renderMarkdown(markdown, telegramEmitter);
}

/** Markdown → readable plain text, for the retry after Telegram rejected the HTML. */
export function toPlainText(markdown: string): string {
  return renderMarkdown(markdown, plainEmitter);
}

/** Characters a user sees in our HTML: tags dropped, each entity one character, ends trimmed as Telegram does. */
export function visibleLength(html: string): number {
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&(?:amp|lt|gt|quot);/g, "&")
    .trim().length;
}
