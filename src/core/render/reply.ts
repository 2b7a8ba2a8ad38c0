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
import { type Cut, MarkdownText } from "./chunk.js";
import { repairMarkdown } from "./repair.js";
import { type Segment, type SegmentCallOptions, SegmentCalls } from "./segment-calls.js";

export { SUPERSEDED } from "./segment-calls.js";

/** Room kept under the limit for repair closers and the tool line of intermediate texts. */
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

/** Where the reply goes, and who hears that the user first saw text. */
export type ReplyWriterOptions = SegmentCallOptions;

export class ReplyWriter {
  private text = "";
  /** The length of a text once the channel converted it; lengths are checked against the limit with it. */
  private readonly measure: Measure | undefined;
  private md: MarkdownText;
  private readonly segments: Segment[] = [];
  private readonly tools = new Map<string, string>();
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
      called: () => this.called,
    });
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

  /** A tool started (`name`) or ended (undefined) — shown as a line under intermediate texts. */
  tool(id: string, name: string | undefined): void {
    if (name === undefined) this.tools.delete(id);
    else this.tools.set(id, name);
    this.kick();
  }

  /** Delivers every chunk's exact final text. Resolves to the reply's messages; throws if one could not be delivered. */
  async finish(): Promise<MessageHandle[]> {
    this.ending = true;
    this.kick();
    await this.loop;
    if (this.failure) throw this.failure.error;
    return this.segments.flatMap((s) => (s.handle ? [s.handle] : []));
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
      if (blank || (!seg.stream && seg.handle && seg.shown === seg.final)) {
        seg.done = true;
        continue;
      }
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
    if (this.text.length === 0) return;
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
        if (live.start >= this.text.length) live.done = !live.handle;
        else live.final = this.md.tail(live.start, live.reopen);
      }
      return;
    }
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
      if (this.display(seg) === seg.shown) return { at: this.rotateAt(seg) };
      return this.at(true, () => this.calls.updateStream(seg));
    }
    if (!this.o.channel.capabilities.edits && this.calls.streamsOff) return { at: Number.POSITIVE_INFINITY };
    // Platforms refuse blank messages: wait for visible text before posting.
    if (!seg.handle)
      return this.display(seg).trim() ? this.at(this.called, () => this.calls.open(seg)) : { at: Number.POSITIVE_INFINITY };
    if (this.display(seg) === seg.shown) return { at: Number.POSITIVE_INFINITY };
    return this.at(true, () => this.calls.editLive(seg));
  }

  /** The intermediate text: repaired Markdown plus running tools; raw for native streams. */
  private display(seg: Segment): string {
    const tail = this.md.tail(seg.start, seg.reopen);
    // A plain-text channel (a terminal) shows raw text; repairs would have to be taken back later.
    if (seg.stream || (!this.calls.streamsOff && !seg.handle) || this.o.channel.capabilities.markdown === "plain") return tail;
    const tools = [...this.tools.values()];
    const toolLine = tools.length > 0 ? `\n\n⏳ _${tools.at(-1)!.slice(0, 40)}…_` : "";
    const shown = repairMarkdown(tail) + toolLine;
    return this.md.size(shown) <= this.limit() ? shown : tail;
  }
}
