/**
 * The platform calls the reply writer (reply.ts) makes for one segment of a reply: posting it,
 * its native stream (started, updated, finished, or abandoned for message edits when it breaks),
 * its edits, and its exact final text, posted anew when the message cannot be edited.
 */
import type { Channel, ConversationRef, MessageHandle, NativeStream } from "../../channels/types.js";
import { NotModifiedError, PlatformNotFoundError, PlatformRateLimitError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import type { Outbound } from "./outbound.js";

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
  /** The intermediate text of `seg` (repaired Markdown plus running tools; raw for native streams). */
  display(seg: Segment): string;
  /** The text of `seg` from its start to the reply's end, as written so far. */
  tail(seg: Segment): string;
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

  async open(seg: Segment): Promise<void> {
    if (!this.streamsOff && (await this.startStream(seg))) return;
    if (this.streamsOff && !this.o.channel.capabilities.edits) return;
    const text = this.host.display(seg);
    try {
      seg.handle = await this.o.out.call("send", () => this.o.channel.send(this.o.ref, { text }), this.host.called());
      seg.shown = text;
      this.visibleNow();
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
    await this.updateStream(seg, false);
    return true;
  }

  async updateStream(seg: Segment, paced = true): Promise<void> {
    const text = this.host.display(seg);
    try {
      await this.o.out.call("stream", () => seg.stream!.update(text), paced);
      seg.shown = text;
      this.visibleNow();
    } catch (err) {
      if (err instanceof NotModifiedError) seg.shown = text;
      else if (!(err instanceof PlatformRateLimitError)) await this.abandonStream(seg, err);
    }
  }

  async finishStream(seg: Segment): Promise<void> {
    const final = seg.final!;
    try {
      // A few tries only: a stream that will not finish falls back to plain messages, which retry.
      await this.o.out.deliver("stream", () => seg.stream!.finish(final), true, STREAM_FINISH_ATTEMPTS);
      seg.shown = final;
      seg.done = true;
      this.visibleNow();
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
    try {
      await this.o.out.call("edit", () => this.o.channel.edit(seg.handle!, { text }), true);
      seg.shown = text;
    } catch (err) {
      if (err instanceof NotModifiedError) seg.shown = text;
      else if (err instanceof PlatformRateLimitError) return;
      else if (err instanceof PlatformNotFoundError || seg.fragile) this.dropHandle(seg, err);
      else this.o.logger.warn({ err }, "editing the reply failed; will try again with newer text");
    }
  }

  private dropHandle(seg: Segment, err: unknown): void {
    this.o.logger.warn({ err }, "the reply's message cannot be edited; posting a new one");
    seg.handle = undefined;
    seg.shown = undefined;
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
    let stale: MessageHandle | undefined;
    if (seg.handle && channel.capabilities.edits) {
      try {
        await out.deliver("edit", () => channel.edit(seg.handle!, { text: final }), true, seg.fragile ? 1 : undefined);
        seg.shown = final;
        seg.done = true;
        return;
      } catch (err) {
        if (!(err instanceof PlatformNotFoundError)) stale = seg.handle;
        this.dropHandle(seg, err);
      }
    }
    const handle = await out.deliver("send", () => channel.send(ref, { text: final }), this.host.called());
    seg.handle = handle;
    seg.shown = final;
    seg.done = true;
    this.visibleNow();
    if (stale) await this.pointToCopy(stale);
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
