/**
 * The web chat's emitter: the agent's Markdown as HTML the page can show with `innerHTML`. Every
 * piece of the source's text is escaped, and the only markup is what this emitter writes: no raw
 * HTML from the agent survives. Links are made only for `http`, `https` and `mailto` targets,
 * and images become links, so a reply never loads anything from elsewhere. Blocks stay separated
 * by the renderer's newlines, which the page keeps (`white-space: pre-wrap`). Lists are real
 * `<ol>`/`<ul>` elements, nested as written: {@link toHtml} lifts them out of the Markdown before
 * the shared renderer (which writes lists as marked lines) sees the rest.
 */
import { Lexer, type Token, type Tokens } from "marked";
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
  hr: () => "<hr>",
  table: (table) => {
    const cells = (row: string[], tag: "th" | "td") =>
      `<tr>${row.map((cell, i) => `<${tag}${ALIGN[table.align[i] ?? "left"] ?? ""}>${cell}</${tag}>`).join("")}</tr>`;
    return `<table><thead>${cells(table.header, "th")}</thead><tbody>${table.rows.map((r) => cells(r, "td")).join("")}</tbody></table>`;
  },
};

/** Block elements: the renderer's blank lines around them would show as extra space. */
const AROUND_BLOCKS = /\n*(<(?:pre|blockquote|table)>|<hr>)|(<\/(?:pre|blockquote|table)>|<hr>)\n*/g;

/** List tags: the page keeps newlines, so none may stand between them. */
const AROUND_LISTS = /\s*(<\/?(?:ol|ul|li)(?: start="\d+")?>)\s*/g;

/** Markdown as the page's HTML. */
export function toHtml(markdown: string): string {
  let tokens: Token[];
  try {
    tokens = new Lexer({ gfm: true }).lex(markdown);
  } catch {
    return blocks(markdown);
  }
  if (!tokens.some((t) => t.type === "list")) return blocks(markdown);
  // Runs of non-list blocks go to the renderer whole (so reference links keep working within them).
  const parts: string[] = [];
  let run = "";
  for (const token of tokens) {
    if (token.type !== "list") {
      run += token.raw;
      continue;
    }
    if (run.trim()) parts.push(blocks(run));
    run = "";
    parts.push(listHtml(token as Tokens.List));
  }
  if (run.trim()) parts.push(blocks(run));
  return parts.join("\n");
}

function blocks(markdown: string): string {
  return renderMarkdown(markdown, htmlEmitter).replace(AROUND_BLOCKS, (_m, open?: string, close?: string) => open ?? close ?? "");
}

/** One list, its items rendered by the shared renderer and its nested lists as lists again. */
function listHtml(list: Tokens.List): string {
  const start = typeof list.start === "number" && list.start !== 1 ? ` start="${list.start}"` : "";
  const items = list.items.map((item) => {
    const box = item.task ? (item.checked ? "☑ " : "☐ ") : "";
    const inner = item.tokens
      .filter((child) => child.type !== "checkbox")
      .map((child) => (child.type === "list" ? listHtml(child as Tokens.List) : blocks(child.raw.trim())))
      .join("\n");
    return `<li>${box}${inner}</li>`;
  });
  const html = list.ordered ? `<ol${start}>${items.join("")}</ol>` : `<ul>${items.join("")}</ul>`;
  return html.replace(AROUND_LISTS, "$1");
}
