/**
 * Code-fence scanning by lines. Chunking and mid-stream repair only need to know where fenced
 * code starts and ends, so a line scan suffices here; everything else is left to `marked`.
 *
 * The scan is deliberately lenient about indentation (fences inside list items are indented),
 * and a text's state at any offset depends only on the text before it: a partial last line is
 * judged as if it were complete. Splitting and joining both rely on that.
 */

/** An open fence: the line that opened it and what closes it. */
export interface Fence {
  /** The opening line as written (indent, marker, info string), without its newline. */
  line: string;
  indent: string;
  /** The run of backticks or tildes that opened it. */
  marker: string;
}

/** One line of a text, with the fence state before it. */
export interface Line {
  start: number;
  /** Offset of the line's newline, or of the text's end for the last line. */
  end: number;
  /** Fence open before this line, if any. */
  fence: Fence | undefined;
  kind: "opener" | "closer" | "code" | "text";
}

const OPENER = /^([ \t]*)(`{3,}|~{3,})(.*)$/;
const CLOSER = /^[ \t]*(`{3,}|~{3,})[ \t]*$/;

/** The fence a line opens, if it is an opening fence. */
export function openerOf(line: string): Fence | undefined {
  const m = OPENER.exec(line);
  if (!m) return undefined;
  const [, indent = "", marker = "", info = ""] = m;
  if (marker.startsWith("`") && info.includes("`")) return undefined;
  return { line, indent, marker };
}

/** Whether `line` closes `fence`: same character, at least as long, nothing after it. */
export function closes(fence: Fence, line: string): boolean {
  const run = CLOSER.exec(line)?.[1];
  return run !== undefined && run[0] === fence.marker[0] && run.length >= fence.marker.length;
}

/** The line that closes `fence` when we close it ourselves. */
export function closerOf(fence: Fence): string {
  return fence.indent + fence.marker;
}

/** The fence state after one more line, given the state before it. */
export function step(fence: Fence | undefined, line: string): { kind: Line["kind"]; after: Fence | undefined } {
  if (fence) return closes(fence, line) ? { kind: "closer", after: undefined } : { kind: "code", after: fence };
  const opened = openerOf(line);
  return opened ? { kind: "opener", after: opened } : { kind: "text", after: undefined };
}

/** Splits `text` into lines and records the fence state before each. */
export function scanLines(text: string): Line[] {
  const lines: Line[] = [];
  let fence: Fence | undefined;
  let start = 0;
  while (start <= text.length) {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl;
    const { kind, after } = step(fence, text.slice(start, end));
    lines.push({ start, end, fence, kind });
    fence = after;
    if (nl === -1) break;
    start = nl + 1;
  }
  return lines;
}

/** The fence still open at the end of `text` (a partial last line counts as complete). */
export function fenceAtEnd(text: string): Fence | undefined {
  let fence: Fence | undefined;
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    fence = step(fence, text.slice(start, nl === -1 ? text.length : nl)).after;
    if (nl === -1) return fence;
    start = nl + 1;
  }
}
