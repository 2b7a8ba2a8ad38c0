/**
 * Splitting long Markdown into messages under a platform's length limit, and the exact inverse.
 *
 * Cuts prefer, in order: a paragraph break, a line break, a sentence end, a space; a hard cut
 * happens only when none of those leaves a chunk at least half full (or none fits at all).
 * A cut inside fenced code closes the fence at the end of the chunk (`\n` + closing marker) and
 * reopens it at the start of the next with the original opening line. When the cut sits just
 * before a newline the reopening line borrows that newline; otherwise (a code line longer than
 * the limit) it gets its own ` \n` — a trailing space CommonMark ignores in an info string — so
 * that {@link joinMarkdownChunks} can always tell the two apart and undo exactly what was added.
 */

import type { Measure } from "../../channels/markdown/measure.js";
import { closerOf, type Fence, fenceAtEnd, type Line, scanLines, step } from "./fence.js";

/** Cut quality, best first. */
enum Level {
  Paragraph = 0,
  Line = 1,
  Sentence = 2,
  Word = 3,
}

/** A cut at a better level is taken only if it leaves the chunk at least this full. */
const MIN_FILL = 0.5;

/** With a measure: a converted chunk this full is not worth a longer search. */
const FULL_ENOUGH = 0.95;
/** With a measure: Markdown chunks may be this many times the limit when conversion shrinks them. */
const MAX_GROWTH = 2;
/** With a measure: a too-long chunk's budget shrinks a little more than in proportion, to land under. */
const SHRINK = 0.97;
/** With a measure: conversions tried to grow a chunk that already fits. */
const MAX_SEARCH = 4;

const SENTENCE_END = /[.!?;:…)]$/;
const CJK_SENTENCE_END = /[。！？；]/g;

export interface Cut {
  /** Offset in the whole text where the chunk ends (exclusive). */
  end: number;
  /** The chunk as it is sent: reopening line + text + closing line where a fence is cut. */
  text: string;
  /** The chunk closed a fence, so the next chunk must reopen it. */
  closed: boolean;
}

export interface CutOptions {
  /** The cut must be a real boundary before the end (rotating a stream); no hard cut, no "take all". */
  force?: boolean;
  /** The previous chunk closed a fence that this one must reopen. Default: whenever `start` is inside one. */
  reopen?: boolean;
}

/** A Markdown text indexed for chunking. Offsets always refer to the whole text. */
export class MarkdownText {
  readonly lines: Line[];

  /**
   * @param measure the length of a chunk once converted for the platform (see `markdown/measure.ts`);
   *   without one, a chunk's length is its Markdown's.
   */
  constructor(
    readonly text: string,
    private readonly measure?: Measure,
  ) {
    this.lines = scanLines(text);
  }

  /** A chunk's length as the platform counts it. */
  size(chunk: string): number {
    return this.measure ? this.measure(chunk) : chunk.length;
  }

  /** The fence open at offset `p`, judging only the text before it. */
  stateAt(p: number): Fence | undefined {
    const line = this.lines[this.lineIndex(p)]!;
    if (p === line.start) return line.fence;
    return step(line.fence, this.text.slice(line.start, p)).after;
  }

  /** What a chunk starting at `p` begins with: the reopened fence, if `p` is inside one. */
  prefixAt(p: number): string {
    const fence = p > 0 ? this.stateAt(p) : undefined;
    if (!fence) return "";
    return this.text[p] === "\n" ? fence.line : `${fence.line} \n`;
  }

  /** What a chunk ending at `p` (not the last) ends with: the closed fence, if `p` is inside one. */
  suffixAt(p: number): string {
    const fence = this.stateAt(p);
    return fence ? `\n${closerOf(fence)}` : "";
  }

  /** The chunk from `start` to the end of the text as it stands (the live, last chunk). */
  tail(start: number, reopen: boolean): string {
    return (reopen ? this.prefixAt(start) : "") + this.text.slice(start);
  }

  /**
   * The next chunk from `start` whose {@link size} is at most `limit`; undefined only with `force`
   * when there is no boundary to cut at.
   */
  nextChunk(start: number, limit: number, options: CutOptions = {}): Cut | undefined {
    return this.measure ? this.measuredChunk(start, limit, options) : this.rawChunk(start, limit, options);
  }

  /**
   * Searches the Markdown budget whose best cut converts to the most that still fits: the budget
   * shrinks in proportion while the converted chunk is too long, and grows (up to
   * {@link MAX_GROWTH} × `limit`) while conversion makes the text shorter than its Markdown.
   */
  private measuredChunk(start: number, limit: number, options: CutOptions): Cut | undefined {
    let budget = limit;
    /** The longest chunk found that fits, and the largest budget known to give a fitting chunk. */
    let best: Cut | undefined;
    let fits = 0;
    let tooBig = Math.floor(limit * MAX_GROWTH) + 1;
    for (let tries = 0; ; tries++) {
      const cut = this.rawChunk(start, budget, options);
      if (!cut) return best;
      const size = this.size(cut.text);
      if (size <= limit) {
        if (!best || cut.end >= best.end) best = cut;
        fits = budget;
        if (cut.end >= this.text.length || size >= limit * FULL_ENOUGH) return best;
      } else {
        // Not even one character fits: send it rather than nothing.
        if (budget <= 1) return best ?? cut;
        tooBig = budget;
      }
      if (tooBig - fits <= 1 || (best && tries >= MAX_SEARCH)) return best ?? cut;
      const guess = Math.floor((budget * limit * (size > limit ? SHRINK : 1)) / Math.max(size, 1));
      budget = Math.min(tooBig - 1, Math.max(fits + 1, guess));
    }
  }

  /** The next chunk from `start` of at most `limit` characters of Markdown. */
  private rawChunk(start: number, limit: number, options: CutOptions): Cut | undefined {
    const prefix = options.reopen === false ? "" : this.prefixAt(start);
    if (!options.force && prefix.length + this.text.length - start <= limit) {
      return { end: this.text.length, text: prefix + this.text.slice(start), closed: false };
    }
    const fits = (p: number) => {
      const suffix = this.suffixAt(p);
      // Closing a fence is only worth it if the next chunk can reopen it and still hold code.
      return prefix.length + (p - start) + suffix.length <= limit && (suffix === "" || this.prefixAt(p).length * 2 <= limit);
    };
    const best = this.bestCut(start, limit - prefix.length, fits);
    if (best !== undefined) {
      const closed = this.suffixAt(best) !== "";
      if (options.force && best === this.text.length && closed) return undefined;
      const last = best === this.text.length && !closed;
      return { end: best, text: prefix + this.text.slice(start, best) + (last ? "" : this.suffixAt(best)), closed };
    }
    if (options.force) return undefined;
    return this.hardCut(start, limit, prefix, fits);
  }

  private bestCut(start: number, budget: number, fits: (p: number) => boolean): number | undefined {
    const best: Array<number | undefined> = [];
    for (const { p, level } of this.candidates(start, start + budget)) {
      if (fits(p) && (best[level] ?? -1) < p) best[level] = p;
    }
    for (const p of best) if (p !== undefined && p - start >= budget * MIN_FILL) return p;
    const any = best.filter((p): p is number => p !== undefined);
    return any.length > 0 ? Math.max(...any) : undefined;
  }

  private hardCut(start: number, limit: number, prefix: string, fits: (p: number) => boolean): Cut {
    const max = Math.min(this.text.length, start + limit - prefix.length);
    for (let p = max; p > start; p--) {
      if (fits(p) && this.clean(start, p, false)) {
        const suffix = this.suffixAt(p);
        return { end: p, text: prefix + this.text.slice(start, p) + suffix, closed: suffix !== "" };
      }
    }
    // Not even one character fits with the fence closed and reopened (a huge opening line):
    // cut without touching the fence; joining sees no added lines there and adds nothing back.
    let p = Math.max(start + 1, max);
    while (p > start + 1 && !this.clean(start, p, true)) p--;
    return { end: p, text: prefix + this.text.slice(start, p), closed: false };
  }

  /** A hard cut must not split a surrogate pair, nor leave anything joining would misread. */
  private clean(start: number, p: number, raw: boolean): boolean {
    if (p > start + 1 && isHighSurrogate(this.text.charCodeAt(p - 1))) return false;
    return !this.misread(p, raw);
  }

  /**
   * A chunk that gets no closing line must not end in what looks like one, or joining would
   * strip it. Only a hard cut can produce that.
   */
  private misread(p: number, raw: boolean): boolean {
    if (!raw && this.suffixAt(p) !== "") return false;
    const nl = this.text.lastIndexOf("\n", p - 1);
    if (nl < 0) return false;
    const fence = this.stateAt(nl);
    return fence !== undefined && this.text.slice(nl + 1, p) === closerOf(fence);
  }

  /** Every possible cut in (start, max], with its level. */
  private *candidates(start: number, max: number): Generator<{ p: number; level: Level }> {
    for (let i = this.lineIndex(start); i < this.lines.length; i++) {
      const line = this.lines[i]!;
      if (line.start > max) return;
      if (line.start > start && line.fence === undefined) {
        const prev = this.lines[i - 1];
        const afterBlank = prev !== undefined && this.isBlank(prev) && !this.isBlank(line);
        yield { p: line.start, level: afterBlank ? Level.Paragraph : Level.Line };
      }
      const next = this.lines[i + 1];
      if (line.kind === "code" && line.end > start && next && next.kind !== "closer") yield { p: line.end, level: Level.Line };
      if (line.kind === "text") yield* this.inlineCuts(line, start);
    }
  }

  private *inlineCuts(line: Line, start: number): Generator<{ p: number; level: Level }> {
    const body = this.text.slice(line.start, line.end);
    for (const m of body.matchAll(/[ \t]+/g)) {
      const p = line.start + m.index + m[0].length;
      if (p <= start || p >= line.end) continue;
      yield { p, level: SENTENCE_END.test(body.slice(0, m.index)) ? Level.Sentence : Level.Word };
    }
    for (const m of body.matchAll(CJK_SENTENCE_END)) {
      const p = line.start + m.index + 1;
      if (p > start && p < line.end) yield { p, level: Level.Sentence };
    }
  }

  private isBlank(line: Line): boolean {
    return this.text.slice(line.start, line.end).trim() === "";
  }

  private lineIndex(p: number): number {
    let lo = 0;
    let hi = this.lines.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lines[mid]!.start <= p) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Splits Markdown into chunks of at most `limit` characters (as `measure` counts them once
 * converted, else of Markdown), never leaving a code fence open inside a chunk (unless the text
 * itself never closes it). `joinMarkdownChunks` undoes it.
 */
export function splitMarkdown(text: string, limit: number, measure?: Measure): string[] {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`chunk limit must be a positive integer, got ${limit}`);
  const md = new MarkdownText(text, measure);
  const chunks: string[] = [];
  let start = 0;
  let reopen = false;
  do {
    const cut: Cut = md.nextChunk(start, limit, { reopen })!;
    chunks.push(cut.text);
    start = cut.end;
    reopen = cut.closed;
  } while (start < text.length);
  return chunks;
}

/** The exact inverse of {@link splitMarkdown}: removes the fence lines it added and concatenates. */
export function joinMarkdownChunks(chunks: string[]): string {
  let out = "";
  let reopened: Fence | undefined;
  chunks.forEach((chunk, i) => {
    let piece = chunk;
    if (reopened) {
      if (piece.startsWith(`${reopened.line} \n`)) piece = piece.slice(reopened.line.length + 2);
      else if (piece.startsWith(`${reopened.line}\n`)) piece = piece.slice(reopened.line.length);
    }
    reopened = undefined;
    if (i < chunks.length - 1) {
      const nl = piece.lastIndexOf("\n");
      const fence = nl >= 0 ? fenceAtEnd(out + piece.slice(0, nl)) : undefined;
      if (fence && piece.slice(nl + 1) === closerOf(fence)) {
        piece = piece.slice(0, nl);
        reopened = fence;
      }
    }
    out += piece;
  });
  return out;
}
