/**
 * The agent's Markdown as a terminal shows it: plain text from the shared plain emitter (no
 * `**`, no fences, `•` bullets, links as `label (url)`). A terminal cannot take back what it
 * printed, so a streamed reply is converted block by block (a paragraph, a list, a code block,
 * split at blank lines): a block a blank line closed never changes, and of the block still being
 * written only its settled part is shown (`settledLength`).
 */
import { plainEmitter, renderMarkdown } from "../markdown/index.js";

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The Markdown's blocks, split at blank lines outside code fences. Every block but the last was
 * followed by a blank line; the last is empty when the text ends with one.
 */
export function markdownBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split("\n")) {
    const mark = FENCE.exec(line)?.[1];
    if (mark && (fence === undefined || (mark[0] === fence[0] && mark.length >= fence.length))) {
      fence = fence === undefined ? mark : undefined;
    }
    if (fence === undefined && line.trim() === "") {
      if (current.length > 0) blocks.push(current.join("\n"));
      current = [];
    } else current.push(line);
  }
  blocks.push(current.join("\n"));
  return blocks;
}

/** One block as terminal text. */
export function terminalBlock(markdown: string): string {
  return renderMarkdown(markdown, plainEmitter);
}

/** A whole message as terminal text: its blocks converted one by one, a blank line between them. */
export function terminalText(markdown: string): string {
  return markdownBlocks(markdown)
    .map(terminalBlock)
    .filter((text) => text !== "")
    .join("\n\n");
}

const INLINE = new Set(["*", "_", "~", "`"]);

/**
 * How much of a block still being written can be shown already: up to its last space, and never
 * past inline markup that is still open (`**bo`, `` `co``, `[label](ur`), whose converted text
 * will differ once it closes. Inside a code block, up to the last whole line (the closing fence
 * may be arriving). A table waits for its end: its first row reads differently once it is one.
 */
export function settledLength(block: string): number {
  if (/^ {0,3}\|/.test(block)) return 0;
  if (FENCE.test(block)) return Math.max(0, block.lastIndexOf("\n"));
  let cut = 0;
  let closing: string | undefined;
  for (let i = 0; i < block.length; i++) {
    const c = block[i]!;
    if (c === "\\") {
      i++;
      continue;
    }
    if (closing !== undefined) {
      if (block.startsWith(closing, i)) {
        i += closing.length - 1;
        closing = undefined;
      }
      continue;
    }
    if (c === " " || c === "\n") cut = i;
    else if (INLINE.has(c)) {
      let run = c;
      while (block[i + run.length] === c) run += c;
      i += run.length - 1;
      // A marker before a space opens nothing (`* item`, `2 * 3`); one at the end may still.
      if (c === "`" || !/\s/.test(block[i + 1] ?? "")) closing = run;
    } else if (c === "[") closing = ")";
  }
  return cut;
}
