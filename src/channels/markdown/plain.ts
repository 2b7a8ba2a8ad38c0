/**
 * The shared plain-text emitter: what a reader should see when markup cannot be shown (Telegram's
 * retry after a parse error, Feishu's `text` messages, DingTalk's titles). It is also every other
 * emitter's default for the hooks it leaves out, so its hooks escape literal text with `this.text`.
 */
import type { FullEmitter, LinkInfo, ListItemInfo, TableInfo } from "./emitter.js";

export const plainEmitter: FullEmitter = {
  name: "plain",
  looseItems: false,
  keepEntities: false,
  text: (text) => text,
  escape(char) {
    return this.text(char);
  },
  strong: (inner) => inner,
  em: (inner) => inner,
  del: (inner) => inner,
  codespan(code) {
    return this.text(code);
  },
  br: () => "\n",
  link(link) {
    return labelAndTarget(link, (text) => this.text(text));
  },
  image(image) {
    return this.link(image);
  },
  heading: (inner) => inner,
  paragraph: (inner) => inner,
  code(code) {
    return this.text(code);
  },
  blockquote: (inner) => prefixLines(inner, "> "),
  hr: () => "──────────",
  table(table) {
    return this.text(tableLines(table.plain).join("\n"));
  },
  listMarker: (item) => defaultMarker(item),
  listIndent: () => "  ",
  measure: (output) => output.length,
};

/** `label (href)`, or just one of them when the label is empty or is the target itself. */
export function labelAndTarget(link: LinkInfo, escapeText: (text: string) => string): string {
  const { href, plainLabel } = link;
  if (plainLabel === "" || plainLabel === href || `mailto:${plainLabel}` === href) return link.label || escapeText(href);
  return `${link.label} (${escapeText(href)})`;
}

/** `•` or `3.`; a task shows its box (after the number in a numbered list). */
export function defaultMarker(item: ListItemInfo): string {
  const box = item.checked ? "☑" : "☐";
  if (item.ordered) return item.task ? `${item.number}. ${box}` : `${item.number}.`;
  return item.task ? box : "•";
}

/** The longest run of `char` in `text`: emitters that fence or tick code need one more than that. */
export function longestRun(text: string, char: string): number {
  let longest = 0;
  let run = 0;
  for (const c of text) {
    run = c === char ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}

/** Prefixes every line of `text`. */
export function prefixLines(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => `${prefix}${line}`)
    .join("\n");
}

/** One line per row, cells joined by ` | `. */
export function tableLines(table: Pick<TableInfo, "header" | "rows">): string[] {
  return [table.header, ...table.rows].map((row) => row.join(" | "));
}
