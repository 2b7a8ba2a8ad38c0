/**
 * The emitter contract: what a platform supplies so that the one Markdown renderer
 * ({@link renderMarkdown} in `walk.ts`) can write the agent's Markdown in that platform's dialect.
 *
 * The renderer walks `marked`'s tokens once: it numbers lists, finds task boxes, lays out list
 * items and nesting, renders table cells, and joins blocks with a blank line. An emitter only
 * says how each piece looks. Every hook is optional: what an emitter leaves out is written as
 * plain text ({@link plainEmitter}), escaped with the emitter's own `text`.
 *
 * Hooks receive their inner content already rendered (and escaped) by the same emitter, except
 * where a parameter says "raw": raw text is the source's own characters, which the hook must
 * escape itself (usually with `this.text`). Hooks are called as methods of the emitter, with the
 * missing ones filled in, so `this.text(…)` and `this.code(…)` always work inside a hook.
 */

/** One list item as the renderer numbered it. */
export interface ListItemInfo {
  /** The list is numbered. */
  ordered: boolean;
  /** The item's number (the list's start plus its index); meaningful when `ordered`. */
  number: number;
  /** The item is a task (`- [ ]` / `- [x]`). */
  task: boolean;
  /** A task item is ticked. */
  checked: boolean;
  /** Nesting depth: 0 for a top-level list. */
  depth: number;
}

/** A table, with every cell rendered twice: by the emitter, and as plain text. */
export interface TableInfo {
  /** Header cells, rendered (and escaped) by the emitter's inline hooks. */
  header: string[];
  /** Body rows, rendered like `header`. */
  rows: string[][];
  /** The same cells as raw plain text (markup removed, nothing escaped), for preformatted tables. */
  plain: { header: string[]; rows: string[][] };
  /** Column alignment from the delimiter row. */
  align: Array<"left" | "right" | "center" | null>;
  /** The table's Markdown source, trimmed (raw). */
  raw: string;
}

/** A link or an image. */
export interface LinkInfo {
  /** The target (raw). */
  href: string;
  /** The label, rendered by the emitter (a link's label may hold emphasis or code). Empty for none. */
  label: string;
  /** The label as raw plain text. */
  plainLabel: string;
}

/**
 * How one platform writes Markdown. Adapters pass theirs as `capabilities.markdown`, and use
 * {@link renderMarkdown} with it when they send or edit, so the core can count a message's length
 * the way the platform does (see `measure`).
 */
export interface MarkdownEmitter {
  /** A short name for logs and tests, e.g. `telegram-html`. */
  readonly name: string;

  /** Literal text (raw): escape what the platform would read as markup. Default: unchanged. */
  text?(text: string): string;
  /** A backslash escape such as `\*` (raw: the escaped character). Default: `text(char)`. */
  escape?(char: string): string;
  /** `**strong**`. Default: the inner text. */
  strong?(inner: string): string;
  /** `*emphasis*`. Default: the inner text. */
  em?(inner: string): string;
  /** `~~strikethrough~~`. Default: the inner text. */
  del?(inner: string): string;
  /** `` `code` `` (raw). Default: the code, escaped by `text`. */
  codespan?(code: string): string;
  /** A hard line break inside a paragraph. Default: a newline. */
  br?(): string;
  /** A link. Default: `label (href)`, or the label alone when it is the target. */
  link?(link: LinkInfo): string;
  /** An image (`label` is the alt text). Default: like a link. */
  image?(image: LinkInfo): string;

  /** A heading (`depth` 1–6). Default: the inner text on its own. */
  heading?(inner: string, depth: number): string;
  /** A paragraph. Default: the inner text. */
  paragraph?(inner: string): string;
  /** A fenced or indented code block (raw `code`, without its trailing newlines). Default: the code, escaped. */
  code?(code: string, lang: string | undefined): string;
  /** A block quote around the rendered blocks inside it. Default: each line prefixed with `> `. */
  blockquote?(inner: string): string;
  /** A thematic break. Default: a line of box-drawing dashes. */
  hr?(): string;
  /** A table. Default: one line per row, cells separated by ` | `. */
  table?(table: TableInfo): string;

  /** What starts a list item, e.g. `•`, `3.`, `☐`, `- [x]`. Default: `•` or the number, a box for tasks. */
  listMarker?(item: ListItemInfo): string;
  /** What the item's further lines (and nested lists) are indented with. Default: two spaces. */
  listIndent?(item: ListItemInfo): string;
  /**
   * A whole list as markup of its own (HTML's `<ol>`/`<ul>`), given each item's blocks already
   * rendered (nested lists through this hook again) and how the renderer numbered it. Absent (the
   * default): a list is lines, each item starting with `listMarker` and indented by `listIndent`.
   */
  list?(items: Array<{ inner: string; item: ListItemInfo }>): string;
  /**
   * Keep a blank line between the blocks of a loose list item (one whose paragraphs are separated
   * by blank lines). Emitters that write Markdown again need it, or the paragraphs would merge.
   * Default: false (one line break).
   */
  readonly looseItems?: boolean;
  /**
   * Pass named character references (`&amp;`, `&lt;`) to `text` as written, for emitters that
   * write Markdown again and leave them to the platform's renderer. Default false: `text` gets the
   * characters they stand for (the common ones) and escapes those. (`marked` itself decodes
   * numeric references such as `&#169;` for every emitter.)
   */
  readonly keepEntities?: boolean;

  /**
   * How long the platform counts a message to be, given the converted `output` and the Markdown it
   * came from. The core splits replies so that this stays within `capabilities.maxTextLength`.
   * Default: `output.length` (UTF-16 code units, as JavaScript counts).
   */
  measure?(output: string, markdown: string): number;
}

/** An emitter with every hook present (`list` only where the emitter has it): what hooks see as `this`. */
export type FullEmitter = Required<Omit<MarkdownEmitter, "list">> & Pick<MarkdownEmitter, "list">;
