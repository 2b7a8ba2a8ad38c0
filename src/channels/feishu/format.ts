/**
 * Feishu's emitter: the agent's Markdown written again as card markdown (JSON 2.0 `markdown`
 * elements). Cards render most CommonMark, but read `<…>` as their own tags and show no external
 * images, so angle brackets are escaped and images become links. Plain text (msg_type `text`) is
 * the shared plain emitter's.
 */
import { longestRun, type MarkdownEmitter, plainEmitter, prefixLines, renderMarkdown } from "../markdown/index.js";

/** Card markdown treats `<…>` as its own tags (`<at>`, `<font>`), so literal angle brackets are escaped. */
function escapeCard(text: string): string {
  return text.replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export const feishuEmitter: MarkdownEmitter = {
  name: "feishu-md",
  text: escapeCard,
  escape: (char) => `\\${char}`,
  strong: (inner) => mark(inner, "**"),
  em: (inner) => mark(inner, "*"),
  del: (inner) => mark(inner, "~~"),
  codespan(code) {
    const ticks = "`".repeat(longestRun(code, "`") + 1);
    const pad = code.startsWith("`") || code.endsWith("`") ? " " : "";
    return `${ticks}${pad}${code}${pad}${ticks}`;
  },
  link: ({ href, label }) => `[${label || escapeCard(href)}](${href})`,
  // Cards show only uploaded images (image_key); an external image becomes its link.
  image: ({ href, label }) => `[${label || "image"}](${href})`,
  heading: (inner, depth) => `${"#".repeat(Math.min(depth, 6))} ${inner}`,
  code(code, lang) {
    const fence = "`".repeat(Math.max(3, longestRun(code, "`") + 1));
    return `${fence}${lang ?? ""}\n${code}\n${fence}`;
  },
  blockquote: (inner) => prefixLines(inner, "> "),
  hr: () => "---",
  table(table) {
    const row = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;
    const rule = `|${table.header.map(() => " --- ").join("|")}|`;
    return [row(table.header), rule, ...table.rows.map(row)].join("\n");
  },
  listMarker: (item) => `${item.ordered ? `${item.number}.` : "-"}${item.task ? (item.checked ? " [x]" : " [ ]") : ""}`,
  // Nested blocks line up under the item's text, as Markdown wants them.
  listIndent: (item) => " ".repeat(item.ordered ? `${item.number}. `.length : 2),
  looseItems: true,
  // Cards read character references themselves.
  keepEntities: true,
};

/** Markdown for a card's `markdown` element. */
export function toCardMarkdown(markdown: string): string {
  return renderMarkdown(markdown, feishuEmitter);
}

/** Readable plain text with the markup removed, for `text` messages. */
export function toPlainText(markdown: string): string {
  return renderMarkdown(markdown, plainEmitter);
}

function mark(inner: string, marker: string): string {
  return inner === "" ? "" : `${marker}${inner}${marker}`;
}
