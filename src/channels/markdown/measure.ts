/**
 * Lengths as the platform counts them. The core splits a reply where the *converted* text fits
 * the channel's `maxTextLength`, so an adapter never has to guess how much room its escapes,
 * tags or tables take.
 */
import type { ChannelCapabilities } from "../types.js";
import { fullEmitter, renderMarkdown } from "./walk.js";

/** Length of a Markdown text once the platform shows it. */
export type Measure = (markdown: string) => number;

/**
 * How to measure Markdown for a channel whose capabilities name this `markdown` format: through
 * its emitter, or undefined when the text goes out as written (its length is the Markdown's own).
 */
export function measureFor(format: ChannelCapabilities["markdown"] | undefined): Measure | undefined {
  if (typeof format !== "object" || format === null) return undefined;
  const emitter = fullEmitter(format);
  return (markdown) => emitter.measure(renderMarkdown(markdown, emitter), markdown);
}

/**
 * `head + tail` when it fits `limit` (as `measure` counts, else in characters); otherwise the
 * longest start of `head`, then `…`, then `tail`. Undefined when not even `…` + `tail` fits.
 */
export function fitText(head: string, limit: number, measure: Measure | undefined, tail = ""): string | undefined {
  const size = (text: string) => (measure ? measure(text) : text.length);
  if (size(head + tail) <= limit) return head + tail;
  const cut = (n: number) => {
    // Never split a surrogate pair (an emoji, a rare CJK character).
    const end = n > 0 && /[\uD800-\uDBFF]/.test(head.charAt(n - 1)) ? n - 1 : n;
    return `${head.slice(0, end)}…${tail}`;
  };
  if (size(cut(0)) > limit) return undefined;
  let lo = 0;
  let hi = head.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (size(cut(mid)) <= limit) lo = mid;
    else hi = mid - 1;
  }
  return cut(lo);
}
