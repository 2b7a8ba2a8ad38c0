/**
 * The platform calls the reply writer (reply.ts) makes for one segment of a reply: posting it,
 * its native stream (started, updated, finished, or abandoned for message edits when it breaks),
 * its edits, and its exact final text, posted anew when the message cannot be edited.
 */
import type { Channel, ConversationRef, MessageHandle, NativeStream, OutboundContent } from "../../channels/types.js";
import { NotModifiedError, PlatformNotFoundError, PlatformRateLimitError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import type { Outbound } from "./outbound.js";
import type { KeyedView } from "./reply-progress.js";

/** Tries at finishing a native stream before falling back to message edits. */
const STREAM_FINISH_ATTEMPTS = 3;

/** What a partial reply becomes once its full text had to be posted as a new message. */
export const SUPERSEDED = "(This reply continues in full in the next message.)";

/** One message of the reply: the text from `start` up to the next segment's start. */
export interface Segment {
  start: number;
  /** The previous chunk closed a fence that this one reopens. */
  reopen: boolean;
  /** Set once the segment is complete: exactly what the message must end up showing. */
  final?: string;
  handle?: MessageHandle;
  stream?: NativeStream;
  streamStartedAt?: number;
  /** The handle of an aborted native stream: if editing it fails at all, post anew. */
  fragile?: boolean;
  /** What the user sees now. */
  shown?: string;
  /** The key of the progress view shown beside the text (content or stream); "" or unset for none. */
  shownView?: string;
  /** Posted for the progress view alone, and the run wrote no text into it: not one of the reply's text messages. */
  viewOnly?: boolean;
  /** A native stream's last call was a text update: a due view goes next. */
  viewNext?: boolean;
  done?: boolean;
  /** Length of the live text when it was last measured against the limit. */
  checked?: number;
}

/** Where the calls go, and who hears that the user first saw text. */
export interface SegmentCallOptions {
  channel: Channel;
  ref: ConversationRef;
  logger: Logger;
  out: Outbound;
  /** Called once, when the user first sees text. */
  onVisible: () => void;
}

/** What the calls read from the writer: the text a segment shows now. */
export interface SegmentText {
  /** The intermediate text of `seg` (repaired Markdown with the progress view's lines; raw for native streams). */
  display(seg: Segment): string;
  /** The text of `seg` from its start to the reply's end, as written so far. */
  tail(seg: Segment): string;
  /** The progress view `seg` shows beside its text (a channel's own view, a stream's `progress()`). */
  view(seg: Segment): KeyedView;
  /** Whether the reply made a platform call yet (the first post need not wait). */
  called(): boolean;
}

export class SegmentCalls {
  /** No native streams for the rest of the reply: the channel has none, or one broke. */
  streamsOff: boolean;
  private visible = false;

  constructor(
    private readonly o: SegmentCallOptions,
    private readonly host: SegmentText,
  ) {
    this.streamsOff = !o.channel.startStream;
  }

  private visibleNow(): void {
    if (this.visible) return;
    this.visible = true;
    this.o.onVisible();
  }

  /** Whether `seg` holds text the user can read (not only the progress view). */
  private hasText(seg: Segment): boolean {
    return this.host.tail(seg).trim() !== "";
  }

  /** What a message shows: its text, and the progress view for a channel that shows it itself. */
  private content(text: string, keyed: KeyedView): OutboundContent {
    return this.o.channel.capabilities.progressView && keyed.view ? { text, progress: keyed.view } : { text };
  }

  async open(seg: Segment): Promise<void> {
    if (!this.streamsOff && (await this.startStream(seg))) return;
    if (this.streamsOff && !this.o.channel.capabilities.edits) return;
    const text = this.host.display(seg);
    const keyed = this.host.view(seg);
    try {
      seg.handle = await this.o.out.call(
        "send",
        () => this.o.channel.send(this.o.ref, this.content(text, keyed)),
        this.host.called(),
      );
      seg.shown = text;
      seg.shownView = keyed.key;
      if (this.hasText(seg)) this.visibleNow();
    } catch (err) {
      if (!(err instanceof PlatformRateLimitError)) this.o.logger.warn({ err }, "posting the reply failed; will retry");
    }
  }

  /** Opens a native stream for `seg`; false when the channel cannot stream here (now or for the rest of the reply). */
  private async startStream(seg: Segment): Promise<boolean> {
    let stream: NativeStream | undefined;
    const before = this.o.out.lastCallAt;
    try {
      stream = await this.o.out.call("stream", () => this.o.channel.startStream!(this.o.ref), this.host.called());
    } catch (err) {
      if (err instanceof PlatformRateLimitError) return true;
      this.o.logger.warn({ err }, "starting a native stream failed; replying by message edits");
    }
    if (!stream) {
      // Usually no platform call happened (the adapter declined), so the first post need not wait.
      this.o.out.lastCallAt = before;
      this.streamsOff = true;
      return false;
    }
    seg.stream = stream;
    seg.handle = stream.handle;
    seg.streamStartedAt = Date.now();
    if (this.hasText(seg)) await this.updateStream(seg, false);
    else {
      // Opened for the progress view alone: the stream shows it, or nothing until the text comes.
      seg.shown = "";
      await this.progressStream(seg, false);
    }
    return true;
  }

  async updateStream(seg: Segment, paced = true): Promise<void> {
    const text = this.host.display(seg);
    try {
      await this.o.out.call("stream", () => seg.stream!.update(text), paced);
      seg.shown = text;
      seg.viewNext = true;
      if (text.trim()) this.visibleNow();
    } catch (err) {
      if (err instanceof NotModifiedError) seg.shown = text;
      else if (!(err instanceof PlatformRateLimitError)) await this.abandonStream(seg, err);
    }
  }

  /**
   * Shows the progress view in `seg`'s native stream, paced like an update. A view the stream
   * refused is not tried again (the text matters; the view is decoration), except after a 429.
   */
  async progressStream(seg: Segment, paced = true): Promise<void> {
    const stream = seg.stream;
    const { view, key } = this.host.view(seg);
    seg.viewNext = false;
    if (!stream?.progress || !view || key === (seg.shownView ?? "")) {
      seg.shownView = key;
      return;
    }
    try {
      await this.o.out.call("stream", () => stream.progress!(view), paced);
    } catch (err) {
      if (err instanceof PlatformRateLimitError) return;
      if (!(err instanceof NotModifiedError)) this.o.logger.warn({ err }, "the native stream did not take the progress view");
    }
    seg.shownView = key;
  }

  async finishStream(seg: Segment): Promise<void> {
    const final = seg.final!;
    try {
      // A few tries only: a stream that will not finish falls back to plain messages, which retry.
      await this.o.out.deliver("stream", () => seg.stream!.finish(final), true, STREAM_FINISH_ATTEMPTS);
      seg.shown = final;
      seg.done = true;
      if (!seg.viewOnly) this.visibleNow();
    } catch (err) {
      await this.abandonStream(seg, err);
    }
  }

  /** A native stream broke: close it and carry on with plain messages, starting from its own. */
  private async abandonStream(seg: Segment, err: unknown): Promise<void> {
    this.o.logger.warn({ err }, "native stream failed; falling back to message edits");
    this.streamsOff = true;
    const stream = seg.stream!;
    seg.stream = undefined;
    seg.shown = undefined;
    seg.shownView = undefined;
    seg.fragile = true;
    if (!this.o.channel.capabilities.edits) seg.handle = undefined;
    const soFar = seg.final ?? this.host.tail(seg);
    try {
      await this.o.out.call("stream", () => stream.abort(soFar), false);
    } catch (abortErr) {
      this.o.logger.debug({ err: abortErr }, "aborting the native stream failed");
    }
  }

  async editLive(seg: Segment): Promise<void> {
    const text = this.host.display(seg);
    const keyed = this.host.view(seg);
    try {
      await this.o.out.call("edit", () => this.o.channel.edit(seg.handle!, this.content(text, keyed)), true);
      seg.shown = text;
      seg.shownView = keyed.key;
      if (this.hasText(seg)) this.visibleNow();
    } catch (err) {
      if (err instanceof NotModifiedError) {
        seg.shown = text;
        seg.shownView = keyed.key;
      } else if (err instanceof PlatformRateLimitError) return;
      else if (err instanceof PlatformNotFoundError || seg.fragile) this.dropHandle(seg, err);
      else this.o.logger.warn({ err }, "editing the reply failed; will try again with newer text");
    }
  }

  private dropHandle(seg: Segment, err: unknown): void {
    this.o.logger.warn({ err }, "the reply's message cannot be edited; posting a new one");
    seg.handle = undefined;
    seg.shown = undefined;
    seg.shownView = undefined;
    seg.fragile = false;
  }

  /**
   * The exact final text: edited into the message if possible, else posted anew. A partial left
   * behind by a new copy is pointed at it, so the chat never shows two versions side by side.
   * Throws if neither works.
   */
  async deliverFinal(seg: Segment): Promise<void> {
    const final = seg.final!;
    const { channel, out, ref } = this.o;
    const keyed = this.host.view(seg);
    const content = this.content(final, keyed);
    if (seg.viewOnly) return this.closeViewOnly(seg, content, keyed.key);
    let stale: MessageHandle | undefined;
    if (seg.handle && channel.capabilities.edits) {
      try {
        await out.deliver("edit", () => channel.edit(seg.handle!, content), true, seg.fragile ? 1 : undefined);
        seg.shown = final;
        seg.shownView = keyed.key;
        seg.done = true;
        if (final.trim()) this.visibleNow();
        return;
      } catch (err) {
        if (!(err instanceof PlatformNotFoundError)) stale = seg.handle;
        this.dropHandle(seg, err);
      }
    }
    const handle = await out.deliver("send", () => channel.send(ref, content), this.host.called());
    seg.handle = handle;
    seg.shown = final;
    seg.shownView = keyed.key;
    seg.done = true;
    this.visibleNow();
    if (stale) await this.pointToCopy(stale);
  }

  /**
   * A message posted for the progress view alone, in a reply that wrote no text: one edit to its
   * end line, so no stale view stays. It is not the reply, so it is never posted anew.
   */
  private async closeViewOnly(seg: Segment, content: OutboundContent, key: string): Promise<void> {
    try {
      await this.o.out.deliver("edit", () => this.o.channel.edit(seg.handle!, content), true, 1);
    } catch (err) {
      this.o.logger.warn({ err }, "could not clear the progress view of a reply that wrote nothing");
    }
    seg.shown = content.text;
    seg.shownView = key;
    seg.done = true;
  }

  /** One try at replacing a partial that a new copy superseded with a pointer to it. */
  private async pointToCopy(stale: MessageHandle): Promise<void> {
    try {
      await this.o.out.call("edit", () => this.o.channel.edit(stale, { text: SUPERSEDED }), true);
    } catch (err) {
      this.o.logger.warn({ err }, "could not mark a partial reply as replaced by the message after it");
    }
  }
}
