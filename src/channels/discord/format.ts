/**
 * Discord's emitter: the agent's Markdown written again in Discord's own dialect. Discord shows
 * bold, italics, strikethrough, code, fenced blocks, quotes, `#`–`###` headings, lists and masked
 * links, but no tables, task boxes or rules, so those become a code block, ☐/☑ and a line. Text
 * is escaped with backslashes wherever Discord would read markup, mentions (`<@id>`) included;
 * sends also carry `allowed_mentions: { parse: [] }`, so nothing the agent writes pings anyone.
 */
import { longestRun, type MarkdownEmitter, prefixLines, renderMarkdown, tableLines } from "../markdown/index.js";

/** Characters Discord reads as inline markup anywhere in a line. */
const INLINE = /[\\*_~`|<>[\]]/g;
/** What starts a block at the beginning of a line: a heading, subtext, quote or list. */
const LINE_START = /^(\s*)(#|-#|[-+*](?=\s))/gm;
/** A number and a dot or parenthesis at a line start opens a list; the punctuation is what gets escaped. */
const NUMBERED = /^(\s*\d+)([.)])(?=\s)/gm;

export function escapeDiscord(text: string): string {
  return text
    .replace(INLINE, "\\$&")
    .replace(LINE_START, (_m, space: string, mark: string) => `${space}\\${mark}`)
    .replace(NUMBERED, (_m, number: string, mark: string) => `${number}\\${mark}`);
}

/** Schemes Discord makes links of; anything else stays as its label with the target after it. */
const LINKABLE = /^(https?|discord):\/\/[^\s)<>]+$/i;

export const discordEmitter: MarkdownEmitter = {
  name: "discord-md",
  text: escapeDiscord,
  escape: (char) => `\\${char}`,
  strong: (inner) => mark(inner, "**"),
  em: (inner) => mark(inner, "*"),
  del: (inner) => mark(inner, "~~"),
  codespan(code) {
    const ticks = "`".repeat(Math.min(2, longestRun(code, "`") + 1));
    const pad = code.startsWith("`") || code.endsWith("`") ? " " : "";
    return `${ticks}${pad}${code}${pad}${ticks}`;
  },
  link: ({ href, label, plainLabel }) => link(href, label, plainLabel),
  image: ({ href, label, plainLabel }) => link(href, label || "image", plainLabel || "image"),
  heading: (inner, depth) => (depth <= 3 ? `${"#".repeat(depth)} ${inner}` : `**${inner}**`),
  code(code, lang) {
    // A fence inside the code would end Discord's block early; a zero-width space defuses it.
    const body = code.replace(/```/g, "`\u200b``");
    const tag = lang && /^[\w+#.-]+$/.test(lang) ? lang : "";
    return `\`\`\`${tag}\n${body}\n\`\`\``;
  },
  blockquote: (inner) => prefixLines(inner, "> "),
  hr: () => "───",
  table: (table) => `\`\`\`\n${tableLines(table.plain).join("\n").replace(/```/g, "`\u200b``")}\n\`\`\``,
  listMarker: (item) => `${item.ordered ? `${item.number}.` : "-"}${item.task ? (item.checked ? " ☑" : " ☐") : ""}`,
  listIndent: (item) => " ".repeat(item.ordered ? `${item.number}. `.length : 2),
};

/** Converts Markdown to Discord's dialect. */
export function toDiscordMarkdown(markdown: string): string {
  return renderMarkdown(markdown, discordEmitter);
}

function link(href: string, label: string, plainLabel: string): string {
  if (!LINKABLE.test(href)) return label && plainLabel !== href ? `${label} (${escapeDiscord(href)})` : escapeDiscord(href);
  if (!label || plainLabel === href) return href;
  return `[${label}](${href})`;
}

function mark(inner: string, marker: string): string {
  return inner.trim() === "" ? inner : `${marker}${inner}${marker}`;
}
