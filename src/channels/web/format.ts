/**
 * The web chat's emitter: the agent's Markdown as HTML the page can show with `innerHTML`. Every
 * piece of the source's text is escaped, and the only markup is what this emitter writes: no raw
 * HTML from the agent survives. Links are made only for `http`, `https` and `mailto` targets,
 * and images become links, so a reply never loads anything from elsewhere. Blocks stay separated
 * by the renderer's newlines, which the page keeps (`white-space: pre-wrap`). Lists are real
 * `<ol>`/`<ul>` elements, nested as written, with no newlines between their tags.
 */
import { type LinkInfo, labelAndTarget, type MarkdownEmitter, renderMarkdown } from "../markdown/index.js";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

const LINKABLE = /^(https?:\/\/|mailto:)/i;

function anchor(link: LinkInfo, fallback: string): string {
  if (!LINKABLE.test(link.href)) return labelAndTarget(link, escapeHtml);
  const label = link.label || escapeHtml(fallback || link.href);
  return `<a href="${escapeHtml(link.href)}" target="_blank" rel="noopener noreferrer">${label}</a>`;
}

const ALIGN = { left: ' class="al-l"', right: ' class="al-r"', center: ' class="al-c"' } as const;

export const htmlEmitter: MarkdownEmitter = {
  name: "web-html",
  text: escapeHtml,
  strong: (inner) => `<strong>${inner}</strong>`,
  em: (inner) => `<em>${inner}</em>`,
  del: (inner) => `<del>${inner}</del>`,
  codespan: (code) => `<code>${escapeHtml(code)}</code>`,
  link: (link) => anchor(link, ""),
  image: (image) => anchor(image, `image: ${image.plainLabel || image.href}`),
  heading: (inner, depth) => `<strong class="h h${depth}">${inner}</strong>`,
  code: (code, lang) => {
    const tag = lang && /^[\w+#.-]+$/.test(lang) ? ` data-lang="${lang}"` : "";
    return `<pre><code${tag}>${escapeHtml(code)}</code></pre>`;
  },
  blockquote: (inner) => `<blockquote>${inner}</blockquote>`,
  list: (items) => {
    const first = items[0]?.item;
    const start = first?.ordered && first.number !== 1 ? ` start="${first.number}"` : "";
    const lis = items.map(({ inner, item }) => {
      const box = item.task ? (item.checked ? "☑ " : "☐ ") : "";
      return `<li>${box}${inner.replace(/\n*(<\/?(?:ol|ul)\b[^>]*>)\n*/g, "$1")}</li>`;
    });
    return first?.ordered ? `<ol${start}>${lis.join("")}</ol>` : `<ul>${lis.join("")}</ul>`;
  },
  hr: () => "<hr>",
  table: (table) => {
    const cells = (row: string[], tag: "th" | "td") =>
      `<tr>${row.map((cell, i) => `<${tag}${ALIGN[table.align[i] ?? "left"] ?? ""}>${cell}</${tag}>`).join("")}</tr>`;
    return `<table><thead>${cells(table.header, "th")}</thead><tbody>${table.rows.map((r) => cells(r, "td")).join("")}</tbody></table>`;
  },
};

/** Block elements: the renderer's blank lines around them would show as extra space. */
const AROUND_BLOCKS = /\n*(<(?:pre|blockquote|table)>|<hr>)|(<\/(?:pre|blockquote|table)>|<hr>)\n*/g;

/** Markdown as the page's HTML. */
export function toHtml(markdown: string): string {
  return renderMarkdown(markdown, htmlEmitter).replace(AROUND_BLOCKS, (_m, open?: string, close?: string) => open ?? close ?? "");
}
