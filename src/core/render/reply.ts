/**
 * The reply writer: turns a growing text into one or more chat messages (or native streams).
 *
 * A single loop makes every call, so at most one is in flight, and it builds each call's text
 * at the moment it makes it, so the newest text always wins and superseded ones never leave.
 * Calls are paced `intervalMs` apart across the whole reply, which bounds the number of edits
 * by (duration / interval) + 2. Text past the length limit freezes into a finished chunk; a
 * frozen chunk gets its exact final text before anything later is posted. The calls themselves,
 * per segment, are in segment-calls.ts.
 */

import { type Measure, measureFor } from "../../channels/markdown/measure.js";
import type { MessageHandle } from "../../channels/types.js";
import type { RunEvent } from "../../harness/types.js";
import type { RunEnding } from "../progress/index.js";
import { type Cut, MarkdownText } from "./chunk.js";
import { fenceAtEnd } from "./fence.js";
import { repairMarkdown } from "./repair.js";
import type { KeyedView, ReplyProgress } from "./reply-progress.js";
import { type Segment, type SegmentCallOptions, SegmentCalls } from "./segment-calls.js";

export { SUPERSEDED } from "./segment-calls.js";

/** Room kept under the limit for repair closers and the progress view of intermediate texts. */
const RESERVE = 64;

/**
 * A live chunk nobody sees before it is complete (no edits, no native stream) is measured again
 * only after this many more characters: converting it on every token would cost more than the
 * token. Its cut is still exact, only found a little later.
 */
const HIDDEN_CHECK_STEP = 256;

/** What the loop does next: a call at `at`, or (without `run`) just wake up then. */
interface Step {
  at: number;
  run?: () => Promise<void>;
}

/** Where the reply goes, who hears that the user first saw text, and the reply's progress view. */
export interface ReplyWriterOptions extends SegmentCallOptions {
  progress: ReplyProgress;
}

/** No view beside a segment's text. */
const NO_VIEW: KeyedView = { view: undefined, key: "" };

export class ReplyWriter {
  private text = "";
  /** The length of a text once the channel converted it; lengths are checked against the limit with it. */
  private readonly measure: Measure | undefined;
  private md: MarkdownText;
  private readonly segments: Segment[] = [];
  private readonly view: ReplyProgress;
  private ending = false;
  private readonly calls: SegmentCalls;
  private wake: (() => void) | undefined;
  /** The loop sleeps until a planned call's time (not waiting for news). */
  private callPlanned = false;
  private loop: Promise<void> | undefined;
  private failure: { error: unknown } | undefined;

  constructor(private readonly o: ReplyWriterOptions) {
    this.calls = new SegmentCalls(o, {
      display: (seg) => this.display(seg),
      tail: (seg) => this.md.tail(seg.start, seg.reopen),
      view: (seg) => this.viewOf(seg),
      called: () => this.called,
    });
    this.view = o.progress;
    this.measure = measureFor(o.channel.capabilities.markdown);
    this.md = new MarkdownText("", this.measure);
  }

  /** The reply so far. */
  get current(): string {
    return this.text;
  }

  /** Set when a final delivery failed for good; the reply cannot be completed. */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  append(delta: string): void {
    if (!delta || this.ending) return;
    this.text += delta;
    // A call is already planned for a set time: it will take the newest text then, so there is
    // nothing to lay out per token. Only a loop waiting for text needs waking.
    if (!this.callPlanned) this.kick();
  }

  /** A run event for the progress view (src/core/progress/); wakes the loop like text does when the view changed. */
  progress(event: RunEvent): void {
    if (this.ending || !this.view.feed(event)) return;
    if (!this.callPlanned) this.kick();
  }

  /**
   * Delivers every chunk's exact final text (the last one with the view's final form). Resolves to
   * the reply's text messages (not a message that only ever showed the view); throws if one could
   * not be delivered.
   */
  async finish(ending: RunEnding = "done"): Promise<MessageHandle[]> {
    this.view.finish(ending);
    this.ending = true;
    this.kick();
    await this.loop;
    if (this.failure) throw this.failure.error;
    return this.segments.flatMap((s) => (s.handle && !s.viewOnly ? [s.handle] : []));
  }

  private kick(): void {
    this.wake?.();
    this.loop ??= this.run().catch((error: unknown) => {
      this.failure = { error };
    });
  }

  private async run(): Promise<void> {
    for (;;) {
      const step = this.plan();
      if (!step) return;
      const wait = step.at - Date.now();
      if (step.run && wait <= 0) await step.run();
      else {
        this.callPlanned = step.run !== undefined;
        await this.sleep(wait);
        this.callPlanned = false;
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  /** Lays out the segments, then picks the first one that needs a call. Undefined = all done. */
  private plan(): Step | undefined {
    this.layout();
    for (const seg of this.segments) {
      if (seg.done) continue;
      if (seg.final === undefined) return this.liveStep(seg);
      const blank = seg.final.trim() === "" && !seg.handle;
      const viewShown = (seg.shownView ?? "") === this.viewOf(seg).key;
      if (blank || (!seg.stream && seg.handle && seg.shown === seg.final && viewShown)) {
        seg.done = true;
        continue;
      }
      if (seg.stream && !viewShown) return this.at(true, () => this.calls.progressStream(seg));
      return seg.stream
        ? this.at(true, () => this.calls.finishStream(seg))
        : this.at(this.called, () => this.calls.deliverFinal(seg));
    }
    return this.ending ? undefined : { at: Number.POSITIVE_INFINITY };
  }

  private at(paced: boolean, run: () => Promise<void>): Step {
    return { at: this.o.out.readyAt(paced), run };
  }

  private get called(): boolean {
    return this.o.out.lastCallAt > Number.NEGATIVE_INFINITY;
  }

  /** Freezes chunks that outgrew the limit (or a native stream about to expire). */
  private layout(): void {
    // Before any text, a segment exists only for a view to show.
    if (this.segments.length === 0 && this.text.length === 0 && (this.ending || !this.view.live())) return;
    if (this.md.text !== this.text) this.md = new MarkdownText(this.text, this.measure);
    if (this.segments.length === 0) this.segments.push({ start: 0, reopen: false });
    for (;;) {
      const live = this.segments.at(-1)!;
      if (live.final !== undefined || live.done) return;
      const limit = this.limit();
      const room = this.ending ? limit : limit - Math.min(RESERVE, Math.floor(limit / 4));
      if (this.outgrew(live, room)) {
        this.freeze(live, this.md.nextChunk(live.start, room, { reopen: live.reopen })!);
        continue;
      }
      if (live.stream && !this.ending && Date.now() >= this.rotateAt(live)) {
        const cut = this.md.nextChunk(live.start, limit, { reopen: live.reopen, force: true });
        if (cut && cut.end > live.start) {
          this.freeze(live, cut);
          continue;
        }
      }
      if (this.ending) {
        if (live.start < this.text.length) live.final = this.finalText(live);
        else if (!live.handle) live.done = true;
        else {
          // Posted for the view alone and the run wrote nothing: it ends as the summary, never a stale view.
          live.final = this.view.endLine();
          live.viewOnly = true;
        }
      }
      return;
    }
  }

  /** The last chunk's final text: the model's text, then the summary line when it is kept and fits. */
  private finalText(live: Segment): string {
    const tail = this.md.tail(live.start, live.reopen);
    const line = live.stream ? "" : this.view.summaryLine();
    if (!line || fenceAtEnd(tail)) return tail;
    const withLine = `${tail.trimEnd()}\n\n${line}`;
    return this.md.size(withLine) <= this.limit() ? withLine : tail;
  }

  /** Whether the live chunk no longer fits `room` once converted. */
  private outgrew(live: Segment, room: number): boolean {
    const tail = this.md.tail(live.start, live.reopen);
    const hidden = !this.ending && this.calls.streamsOff && !this.o.channel.capabilities.edits;
    if (hidden && this.measure && tail.length < (live.checked ?? 0) + HIDDEN_CHECK_STEP) return false;
    live.checked = tail.length;
    return this.md.size(tail) > room;
  }

  private freeze(seg: Segment, cut: Cut): void {
    seg.final = cut.text;
    this.segments.push({ start: cut.end, reopen: cut.closed });
  }

  private limit(): number {
    const { maxTextLength } = this.o.channel.capabilities;
    const stream = this.o.channel.streamLimits?.maxTextLength;
    return this.o.channel.startStream && stream ? Math.min(maxTextLength, stream) : maxTextLength;
  }

  /** When to finish a native stream and start the next, early enough to beat its expiry. */
  private rotateAt(seg: Segment): number {
    const max = this.o.channel.streamLimits?.maxDurationMs;
    if (!max || seg.streamStartedAt === undefined) return Number.POSITIVE_INFINITY;
    const margin = Math.min(max / 2, Math.max(2 * this.o.out.intervalMs, max / 5));
    return seg.streamStartedAt + max - margin;
  }

  private liveStep(seg: Segment): Step {
    if (seg.stream) {
      const textDue = this.display(seg) !== seg.shown;
      const viewDue = this.viewOf(seg).key !== (seg.shownView ?? "");
      // Text and view take turns, so a steady stream of text cannot hold a stale view.
      if (viewDue && (!textDue || seg.viewNext)) return this.at(true, () => this.calls.progressStream(seg));
      if (textDue) return this.at(true, () => this.calls.updateStream(seg));
      return { at: this.rotateAt(seg) };
    }
    if (!this.o.channel.capabilities.edits && this.calls.streamsOff) return { at: Number.POSITIVE_INFINITY };
    // Platforms refuse blank messages: wait for visible text (or a view worth a message of its own).
    if (!seg.handle) {
      if (this.md.tail(seg.start, seg.reopen).trim()) return this.at(this.called, () => this.calls.open(seg));
      return this.viewOnlyStep(seg);
    }
    if (this.display(seg) === seg.shown && this.viewOf(seg).key === (seg.shownView ?? "")) {
      return { at: Number.POSITIVE_INFINITY };
    }
    return this.at(true, () => this.calls.editLive(seg));
  }

  /**
   * Before the reply's first text: post the message for the view alone once the view has had
   * something to show for a moment, where the view can show (text lines, or a channel that shows
   * it itself; a native stream shows it through `progress()`, or nothing until the text comes).
   */
  private viewOnlyStep(seg: Segment): Step {
    const idle = { at: Number.POSITIVE_INFINITY };
    const { inText, inContent } = this.view;
    if (seg !== this.segments[0] || !(inContent || inText) || !this.view.live()) return idle;
    const at = this.view.viewOnlyAt ?? Number.POSITIVE_INFINITY;
    return Date.now() < at ? { at } : this.at(this.called, () => this.calls.open(seg));
  }

  /**
   * The view `seg` carries beside its text, for a channel that shows it itself or a native stream
   * with `progress()`: the live view on the live segment, the final one once the reply ended, and
   * an empty one on segments before the last. Text channels carry the view in `display` instead.
   */
  private viewOf(seg: Segment): KeyedView {
    const beside = seg.stream ? seg.stream.progress !== undefined : this.view.inContent;
    if (!beside) return NO_VIEW;
    const keyed = seg !== this.segments.at(-1) ? NO_VIEW : seg.final === undefined ? this.view.liveView() : this.view.finalView();
    // A stream keeps what it was last shown until told otherwise: an empty view clears it.
    return keyed.view || !seg.stream ? keyed : { view: this.view.emptyView(), key: "" };
  }

  /** The intermediate text: repaired Markdown with the progress view under it; raw for native streams. */
  private display(seg: Segment): string {
    const tail = this.md.tail(seg.start, seg.reopen);
    // A plain-text channel (a terminal) shows raw text; repairs would have to be taken back later.
    if (seg.stream || (!this.calls.streamsOff && !seg.handle) || this.o.channel.capabilities.markdown === "plain") return tail;
    const text = repairMarkdown(tail);
    const live = seg === this.segments.at(-1) && seg.final === undefined;
    const limit = this.limit();
    // The view goes when it does not fit, in its compact form first; the text never does.
    for (const lines of live ? this.view.textForms() : []) {
      const shown = text.trim() ? `${text.trimEnd()}\n\n${lines}` : lines;
      if (this.md.size(shown) <= limit) return shown;
    }
    return this.md.size(text) <= limit ? text : tail;
  }
}
