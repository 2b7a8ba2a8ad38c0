/**
 * A reply streaming onto the terminal (the console's native stream). Text only ever grows at the
 * bottom of a terminal, so each update prints what it adds: the blocks a blank line closed, and
 * of the block still being written the part that will not read differently later (format.ts's
 * `settledLength`). `finish` prints the rest and ends the line, so the next prompt starts on its
 * own line.
 */
import type { MessageHandle, NativeStream } from "../types.js";
import { markdownBlocks, settledLength, terminalBlock } from "./format.js";

/** What the stream needs of the console. */
export interface TerminalWriter {
  /** Writes at the bottom of the terminal, ending the line of an earlier message first if `fresh`. */
  write(text: string, fresh: boolean): void;
}

export class TerminalStream implements NativeStream {
  /** Blocks already shown whole (or empty and skipped). */
  private taken = 0;
  /** What is shown so far of the block being written, when some of it is. */
  private partial: string | undefined;
  /** Some text was printed: the reply's line is open. */
  private started = false;
  private closed = false;

  constructor(
    readonly handle: MessageHandle,
    private readonly prefix: string,
    private readonly out: TerminalWriter,
  ) {}

  async update(text: string): Promise<void> {
    const blocks = markdownBlocks(text);
    this.complete(blocks.slice(0, -1));
    const open = blocks.at(-1) ?? "";
    const settled = terminalBlock(open.slice(0, settledLength(open)));
    if (settled !== "") this.show(settled, false);
  }

  async finish(text: string): Promise<void> {
    this.close(text);
  }

  async abort(text: string): Promise<void> {
    this.close(text);
  }

  private close(text: string): void {
    if (this.closed) return;
    this.closed = true;
    this.complete(markdownBlocks(text));
    if (this.started) this.out.write("\n", false);
  }

  /** Shows the rest of each block past those already shown whole. */
  private complete(blocks: string[]): void {
    for (const block of blocks.slice(this.taken)) {
      this.taken++;
      this.show(terminalBlock(block), true);
      this.partial = undefined;
    }
  }

  /**
   * Shows `text`, the current block's converted text so far (`whole` once the block is done):
   * only what it adds to the part already shown. When it no longer continues that part (rare:
   * the settled cut guessed wrong), a partial text waits, and a whole block is shown again below.
   */
  private show(text: string, whole: boolean): void {
    const shown = this.partial;
    if (shown !== undefined) {
      if (text.startsWith(shown)) this.out.write(text.slice(shown.length), false);
      else if (whole) this.out.write(`\n${text}`, false);
      else return;
    } else if (text !== "") {
      this.out.write(this.started ? `\n\n${text}` : `${this.prefix}${text}`, !this.started);
      this.started = true;
    }
    if (!whole) this.partial = text;
  }
}
