/**
 * DingTalk's emitter: the agent's Markdown in DingTalk's markdown subset. DingTalk renders
 * headings, bold, italic, links, images, lists, quotes and rules; it has no code blocks, inline
 * code, strikethrough or tables, so those degrade to readable text: code blocks become quoted
 * lines (indentation kept with no-break spaces), tables one line per row, `code` and ~~del~~ lose
 * their marks.
 */
import { type MarkdownEmitter, plainEmitter, prefixLines, renderMarkdown } from "../markdown/index.js";

/** A hard line break: DingTalk folds single newlines inside a block. */
const BREAK = "  \n";
const NBSP = "\u00a0";

export const dingtalkEmitter: MarkdownEmitter = {
  name: "dingtalk-md",
  // An escaped character stays escaped: written bare, `\[x\](y)` would become a link.
  escape: (char) => `\\${char}`,
  strong: (inner) => `**${inner}**`,
  em: (inner) => `*${inner}*`,
  link: ({ href, label }) => `[${label || href}](${href})`,
  image: ({ href, plainLabel }) => `![${plainLabel}](${href})`,
  br: () => BREAK,
  heading: (inner, depth) => `${"#".repeat(Math.min(depth, 6))} ${inner}`,
  code(code, lang) {
    const label = lang ? [`${lang}:`] : [];
    const kept = code.split("\n").map((l) => literalLine(l).replace(/^ +/, (s) => NBSP.repeat(s.length)) || NBSP);
    return prefixLines([...label, ...kept].join(BREAK), "> ");
  },
  hr: () => "---",
  table(table) {
    const head = table.header;
    const rows = table.rows.map((row) => row.map((c, i) => (head[i] ? `${head[i]}: ${c}` : c)).join(", "));
    return (rows.length > 0 ? rows : [head.join(", ")]).join(BREAK);
  },
  listMarker: (item) => `${item.ordered ? `${item.number}.` : "-"}${item.task ? (item.checked ? " ☑" : " ☐") : ""}`,
  listIndent: () => "    ",
  looseItems: true,
  // DingTalk renders the Markdown, references included; they go as written, as before.
  keepEntities: true,
};

/**
 * A code line shown as text: its Markdown punctuation is escaped, so `# comment` or `- x` inside
 * code stay as written instead of becoming a heading or a list in the quote.
 */
function literalLine(line: string): string {
  return line
    .replace(/[\\`*_[\]<>#|~!]/g, "\\$&")
    .replace(/^(\s*)([-+])(?=\s|$)/, "$1\\$2")
    .replace(/^(\s*\d+)\.(?=\s|$)/, "$1\\.");
}

export function toDingTalkMarkdown(markdown: string): string {
  return renderMarkdown(markdown, dingtalkEmitter);
}

/** A short plain title for markdown messages (shown in notifications and the chat list). */
export function markdownTitle(markdown: string, max = 24): string {
  const line =
    renderMarkdown(markdown, plainEmitter)
      .split("\n")
      .find((l) => l.trim() !== "") ?? "";
  // A quote's or a list's marker says nothing in a title.
  const title = line.replace(/^(?:\s*(?:>|•|☐|☑|\d+\.)\s)+/, "").trim();
  if (title.length <= max) return title || "reply";
  const cut = /[\uD800-\uDBFF]/.test(title.charAt(max - 2)) ? max - 2 : max - 1;
  return `${title.slice(0, cut)}…`;
}
