/**
 * Mid-stream repair: a reply cut off at an arbitrary token often has an open code fence, code
 * span, emphasis or link. Shown as is, the platform renders stray markers or, worse, swallows
 * the rest of the message into code. Intermediate texts are repaired; the final text never is.
 *
 * `marked`'s inline lexer decides what is already matched: whatever it leaves as plain text
 * still holds the unmatched openers, which are closed in reverse order. Inline markup never
 * spans lines in model output in practice, so only the last line is examined.
 */
import { Lexer, type Token } from "marked";
import { closerOf, fenceAtEnd } from "./fence.js";

/** Closes what a partial Markdown text left open, so it renders sensibly until more arrives. */
export function repairMarkdown(partial: string): string {
  const fence = fenceAtEnd(partial);
  if (fence) return `${partial}${partial.endsWith("\n") ? "" : "\n"}${closerOf(fence)}`;
  const lineStart = partial.lastIndexOf("\n") + 1;
  const line = partial.slice(lineStart);
  // A last line that is a fence marker just closed a code block: nothing inline to repair.
  if (FENCE_LINE.test(line)) return partial;
  return partial.slice(0, lineStart) + repairLine(line);
}

const FENCE_LINE = /^[ \t]*(`{3,}|~{3,})/;
const OPENABLE = /^(\*{1,3}|_{1,3}|~{1,2})$/;
const DANGLING_TAIL = /(^|\s)[*_~`]+$/;
const PARTIAL_LINK = /!?\[([^\]\n]*)\]\([^)\s]*$/;

function repairLine(line: string): string {
  // An unfinished link shows its label alone until the URL is complete.
  let text = line.replace(PARTIAL_LINK, "$1");
  // A marker with nothing after it yet is hidden rather than closed around nothing.
  text = text.replace(DANGLING_TAIL, "$1");
  const tokens = lexInline(text);
  if (!tokens) return text;
  const openers: string[] = [];
  let code: string | undefined;
  let offset = 0;
  for (const token of tokens) {
    if (token.type === "text" && code === undefined) code = scanText(text, offset, token.raw.length, openers);
    offset += token.raw.length;
  }
  const closers = [...openers].reverse().join("");
  if (code !== undefined) return `${text}${code}${closers}`;
  return closers ? `${text.trimEnd()}${closers}` : text;
}

function lexInline(text: string): Token[] | undefined {
  try {
    const tokens = Lexer.lexInline(text);
    // Offsets below assume the tokens cover the text exactly; anything else is left alone.
    return tokens.map((t) => t.raw).join("") === text ? tokens : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Collects emphasis openers in one unmatched text run. Returns the backtick run of an
 * unmatched code span, after which everything is code and nothing else opens.
 */
function scanText(text: string, from: number, length: number, openers: string[]): string | undefined {
  const end = from + length;
  for (let i = from; i < end; ) {
    const ch = text[i]!;
    if (ch !== "*" && ch !== "_" && ch !== "~" && ch !== "`") {
      i++;
      continue;
    }
    let j = i;
    while (j < end && text[j] === ch) j++;
    const run = text.slice(i, j);
    if (ch === "`") return run;
    const before = text[i - 1] ?? " ";
    const after = text[j];
    const opens = after !== undefined && !/\s/.test(after) && !(ch === "_" && /[\p{L}\p{N}]/u.test(before));
    if (opens && OPENABLE.test(run)) openers.push(run);
    i = j;
  }
  return undefined;
}
