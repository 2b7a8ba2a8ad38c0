/**
 * A reply streamed with Slack's chat.startStream / appendStream / stopStream. The core hands the
 * whole text so far; Slack appends, so only the new part is sent. If the stream breaks mid-way
 * (`streaming_state_conflict`, an expired stream, …) the same message is finished by chat.update
 * with the whole text, so the final text is still exact. The progress view goes beside the text
 * (progress.ts): the thread's status line and task cards while streaming, the summary as a small
 * context line under the finished reply; once the stream broke, as lines under the edited text.
 */
import type { webApi } from "@slack/bolt";
import { PlatformRateLimitError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { progressEnded, progressLines } from "../kit/progress.js";
import type { MessageHandle, NativeStream, ProgressContent } from "../types.js";
import { escapeMrkdwn } from "./format.js";
import { mapSlackError, slackErrorCode } from "./map-error.js";
import { SlackProgress } from "./progress.js";

type WebClient = InstanceType<typeof webApi.WebClient>;

export class SlackNativeStream implements NativeStream {
  /** Text Slack has confirmed, as the agent's Markdown. */
  private sent = "";
  /** Set once the stream broke: from then on the message is edited whole. */
  private fallback = false;
  /** Message that shows the reply in fallback mode (a new one if the stream message stays locked). */
  private fallbackTs: string | undefined;
  private closed = false;
  /** The newest text the core gave, to show again with the view in fallback mode. */
  private latest = "";
  private readonly view: SlackProgress;

  constructor(
    private readonly web: WebClient,
    private readonly channelName: string,
    readonly handle: MessageHandle,
    private readonly logger: Logger,
  ) {
    this.view = new SlackProgress(web, channelName, handle, logger);
  }

  async progress(view: ProgressContent): Promise<void> {
    if (this.closed) return;
    const before = this.fallback ? progressLines(this.view.view) : "";
    await this.view.show(view, !this.fallback);
    // A message edited whole shows the view as lines under the text.
    if (this.fallback && progressLines(view) !== before) await this.replaceWhole(this.latest);
  }

  async update(text: string): Promise<void> {
    if (this.closed) return;
    this.latest = text;
    if (this.fallback) return this.replaceWhole(text);
    if (!text.startsWith(this.sent)) return this.breakStream(text, "text was rewritten");
    const delta = text.slice(this.sent.length);
    if (!delta) return;
    try {
      await this.web.chat.appendStream({ channel: this.handle.ref.chatId, ts: this.handle.id, markdown_text: delta });
      this.sent = text;
    } catch (err) {
      await this.onStreamError(err, text, "chat.appendStream");
    }
  }

  async finish(text: string): Promise<void> {
    if (this.closed) return;
    this.latest = text;
    if (this.fallback) {
      await this.replaceWhole(text);
      this.closed = true;
      return;
    }
    if (!text.startsWith(this.sent)) {
      await this.breakStream(text, "final text differs from the streamed text");
      this.closed = true;
      return;
    }
    const delta = text.slice(this.sent.length);
    try {
      const summary = this.summaryBlocks();
      await this.web.chat.stopStream({
        channel: this.handle.ref.chatId,
        ts: this.handle.id,
        ...(delta ? { markdown_text: delta } : {}),
        ...(summary ? { blocks: summary } : {}),
      });
      this.sent = text;
    } catch (err) {
      await this.onStreamError(err, text, "chat.stopStream");
    }
    this.closed = true;
  }

  async abort(text: string): Promise<void> {
    try {
      await this.finish(text);
    } catch (err) {
      this.logger.warn({ err }, "slack stream abort failed");
      this.closed = true;
    }
  }

  /** Rate limits go back to the core (it waits and calls again); anything else breaks the stream. */
  private async onStreamError(err: unknown, text: string, method: string): Promise<void> {
    const mapped = mapSlackError(this.channelName, err, method);
    if (mapped instanceof PlatformRateLimitError) throw mapped;
    await this.breakStream(text, slackErrorCode(err) ?? mapped.message);
  }

  private async breakStream(text: string, reason: string): Promise<void> {
    this.logger.warn({ reason, ts: this.handle.id }, "slack native stream failed; continuing with chat.update");
    this.fallback = true;
    try {
      await this.web.chat.stopStream({ channel: this.handle.ref.chatId, ts: this.handle.id });
    } catch {
      // Already stopped or expired: chat.update below is what matters.
    }
    await this.replaceWhole(text);
  }

  /** The run's summary as a small context line under the finished reply, when the final view kept one. */
  private summaryBlocks() {
    const view = this.view.view;
    if (!view || !progressEnded(view) || !view.summary) return undefined;
    return [{ type: "context" as const, elements: [{ type: "mrkdwn" as const, text: `✓ ${escapeMrkdwn(view.summary)}` }] }];
  }

  private async replaceWhole(text: string): Promise<void> {
    const channel = this.handle.ref.chatId;
    const body = [text, progressLines(this.view.view)].filter(Boolean).join("\n\n") || " ";
    try {
      await this.web.chat.update({ channel, ts: this.fallbackTs ?? this.handle.id, markdown_text: body });
      return;
    } catch (err) {
      const code = slackErrorCode(err);
      const locked = code === "streaming_state_conflict" || code === "cant_update_message";
      if (!locked || this.fallbackTs) throw mapSlackError(this.channelName, err, "chat.update");
    }
    // The stream message cannot be edited at all: show the reply in a fresh message of the thread.
    try {
      const posted = await this.web.chat.postMessage({
        channel,
        markdown_text: body,
        ...(this.handle.ref.threadId ? { thread_ts: this.handle.ref.threadId } : {}),
      });
      this.fallbackTs = posted.ts;
    } catch (err) {
      throw mapSlackError(this.channelName, err, "chat.postMessage");
    }
  }
}
