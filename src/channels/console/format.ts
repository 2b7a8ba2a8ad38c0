/**
 * The agent's Markdown as a terminal shows it: plain text from the shared plain emitter (no
 * `**`, no fences, `•` bullets, links as `label (url)`). A terminal cannot take back what it
 * printed, so a streamed reply is shown block by block: a block (a paragraph, a list, a code
 * block) is converted once the blank line after it has arrived, and never changes after that.
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
