/**
 * Slack's emitter: the agent's Markdown as mrkdwn. Slack has no headings, tables or nested
 * emphasis, so those degrade to bold lines and code blocks. `& < >` are escaped everywhere, and
 * the core counts the escapes against Slack's 4,000-character limit.
 */
import { type MarkdownEmitter, prefixLines, renderMarkdown } from "../markdown/index.js";

/** Escapes the three characters Slack reserves for its own markup. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Schemes Slack makes links of; a link to anything else (`javascript:`) stays as its label. */
const LINKABLE = /^(https?|mailto|tel):[^\s<>|]+$/i;

/** Slack's emphasis markers. */
const MARKERS = "*_~";

export const slackEmitter: MarkdownEmitter = {
  name: "slack-mrkdwn",
  text: escapeMrkdwn,
  // mrkdwn has no escapes, but nothing inside inline code is formatting: an escaped marker
  // (`\_` in the Markdown, a `_` of a notice) goes as code, so `__init__.py` cannot turn italic.
  escape: (char) => (MARKERS.includes(char) ? `\`${char}\`` : escapeMrkdwn(char)),
  strong: (inner) => wrap("*", inner),
  em: (inner) => wrap("_", inner),
  del: (inner) => wrap("~", inner),
  codespan: (code) => `\`${escapeMrkdwn(code)}\``,
  link: ({ href, label }) => {
    if (!LINKABLE.test(href)) return label || escapeMrkdwn(href);
    return label && label !== escapeMrkdwn(href) ? `<${href}|${label}>` : `<${href}>`;
  },
  image: ({ href, label }) => {
    if (!LINKABLE.test(href)) return label || escapeMrkdwn(href);
    return label ? `<${href}|${label}>` : `<${href}>`;
  },
  heading: (inner) => `*${inner}*`,
  code: (code) => fence(code),
  blockquote: (inner) => prefixLines(inner, "> "),
  hr: () => "───",
  table: (table) => fence(table.raw),
  listMarker: (item) => `${item.ordered ? `${item.number}.` : "•"}${item.task ? (item.checked ? " ☑" : " ☐") : ""}`,
  listIndent: () => "    ",
};

/** Converts Markdown to mrkdwn. */
export function toMrkdwn(markdown: string): string {
  return joinEscapes(renderMarkdown(markdown, slackEmitter));
}

/** Escaped markers side by side (`` `_``_` ``) as one span (`` `__` ``), since Slack reads a double backtick as neither. */
function joinEscapes(mrkdwn: string): string {
  return mrkdwn.replace(/(?:`[*_~]`){2,}/g, (run) => `\`${run.replace(/`/g, "")}\``);
}

function fence(code: string): string {
  // A fence inside the code would end Slack's block early; a zero-width space defuses it.
  return `\`\`\`\n${escapeMrkdwn(code.replace(/```/g, "`\u200b``"))}\n\`\`\``;
}

/** Slack ignores emphasis markers that touch whitespace, so keep the spaces outside them. */
function wrap(mark: string, text: string): string {
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(text);
  if (!m?.[2]) return text;
  return `${m[1]}${mark}${m[2]}${mark}${m[3]}`;
}
