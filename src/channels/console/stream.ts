/**
 * A reply streaming onto the terminal (the console's native stream). Text only ever grows at the
 * bottom of a terminal, so each update prints the Markdown blocks that are complete and not yet
 * printed; `finish` prints the rest and ends the line, so the next prompt starts on its own line.
 */
import type { MessageHandle, NativeStream } from "../types.js";
import { markdownBlocks, terminalBlock } from "./format.js";

/** What the stream needs of the console. */
export interface TerminalWriter {
  /** Writes at the bottom of the terminal, ending the line of an earlier message first if `fresh`. */
  write(text: string, fresh: boolean): void;
}

export class TerminalStream implements NativeStream {
  /** Blocks already taken (printed, or empty and skipped). */
  private taken = 0;
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
    this.print(blocks.slice(0, -1));
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
    this.print(markdownBlocks(text));
    if (this.started) this.out.write("\n", false);
  }

  /** Prints the blocks past those already printed; empty ones (the tail after a blank line) wait. */
  private print(blocks: string[]): void {
    for (const block of blocks.slice(this.taken)) {
      this.taken++;
      const text = terminalBlock(block);
      if (text === "") continue;
      this.out.write(this.started ? `\n\n${text}` : `${this.prefix}${text}`, !this.started);
      this.started = true;
    }
  }
}
