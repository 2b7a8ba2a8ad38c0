/**
 * Text as Markdown that shows exactly that text. Notices are plain text (a file name such as
 * `__init__.py`, a type list such as `image/*, audio/*`, a user's name or reason), but every
 * channel renders what it is sent as Markdown, so the core escapes them once here. Each escaped
 * character reaches the emitter as an escape (`MarkdownEmitter.escape`), which writes it as a
 * literal in the platform's dialect.
 *
 * Only what CommonMark (with GitHub's extensions) could read as markup is escaped, so ordinary
 * sentences go out unchanged.
 */

/** Characters that are markup wherever they stand: emphasis, code, links, strikethrough, tables, escapes. */
const INLINE = /[\\`*~[\]|]/g;
/** `_` emphasises only at a word's edge: inside a word (`send_email`) it is text already. */
const UNDERSCORE = /(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu;
/** `<` opening a tag or an autolink, `&` opening a character reference. */
const OPENERS = /<(?=[A-Za-z/!?])|&(?=#?[A-Za-z0-9]+;)/g;
/** What opens a block at a line's start: a heading, quote, list item, setext underline or thematic break. */
const LINE_START = /^([ \t]*)([#>+=-])/gm;
/** A number and `.` or `)` at a line's start opens a numbered list. */
const NUMBERED = /^([ \t]*\d{1,9})([.)])/gm;
/** Four spaces or a tab at a line's start would make a code block. */
const INDENT = /^(?: {4,}|\t)+/gm;
/** A line break inside a paragraph, which some platforms fold into a space. */
const SOFT_BREAK = /([^\n])\n(?=[^\n])/g;

/** Markdown whose rendering, on every emitter, is `text` itself. */
export function literalMarkdown(text: string): string {
  return (
    text
      .replace(INLINE, "\\$&")
      .replace(UNDERSCORE, "\\_")
      .replace(OPENERS, "\\$&")
      .replace(INDENT, (space) => space.replace(/\t/g, "    ").replace(/ /g, "\u00a0"))
      .replace(LINE_START, "$1\\$2")
      .replace(NUMBERED, "$1\\$2")
      // Two spaces before a line break make it a hard break: the line ends where the text's does.
      // (Not a backslash: a notice cut into messages at that line would show it.)
      .replace(SOFT_BREAK, "$1  \n")
  );
}
