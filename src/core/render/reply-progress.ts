/**
 * One reply's progress view, as the reply writer needs it: the run's tracker (src/core/progress/)
 * and how this channel shows the view. A channel with `capabilities.progressView` gets the view
 * as `content.progress`; a native stream with `progress()` gets it through that; every other
 * channel gets it as Markdown lines under the live text. A `plain` channel (a terminal) shows
 * none of it in text: it can only append.
 */
import { literalMarkdown } from "../../channels/markdown/literal.js";
import type { Channel, ProgressContent } from "../../channels/types.js";
import type { ProgressSettings } from "../../config/followups.js";
import type { RunEvent } from "../../harness/types.js";
import {
  compactText,
  formatDuration,
  ProgressTracker,
  progressText,
  type RunEnding,
  summaryText,
  type TextStyle,
} from "../progress/index.js";

/** The view when the turn says nothing: one compact line, no summary, no reasoning. */
const DEFAULT_SETTINGS: ProgressSettings = { mode: "compact", summary: false, show_reasoning: false };

/**
 * How long the view must have had something to show before a reply with no text yet is posted
 * for the view alone: a quick tool followed by words needs no message of its own.
 */
export const VIEW_ONLY_AFTER_MS = 1_000;

export class ReplyProgress {
  readonly tracker: ProgressTracker;
  /** The channel shows `content.progress` itself. */
  readonly inContent: boolean;
  /** The channel's text can carry the view as lines. */
  readonly inText: boolean;
  private readonly style: TextStyle;
  private cached: KeyedView | undefined;
  /** When the live view first had something to show. */
  private shownSince: number | undefined;

  constructor(channel: Channel, settings: ProgressSettings = DEFAULT_SETTINGS, scrub?: (text: string) => string) {
    this.tracker = new ProgressTracker(settings, scrub ? { scrub } : {});
    this.inContent = channel.capabilities.progressView === true;
    const markdown = channel.capabilities.markdown !== "plain";
    this.inText = !this.inContent && markdown;
    this.style = { literal: markdown ? literalMarkdown : (t) => t, markdown };
  }

  get off(): boolean {
    return this.tracker.off;
  }

  /** Takes in a run event; true when the live view changed. */
  feed(event: RunEvent): boolean {
    if (!this.tracker.feed(event)) return false;
    this.cached = undefined;
    if (this.shownSince === undefined && this.live()) this.shownSince = Date.now();
    return true;
  }

  finish(ending: RunEnding): void {
    this.tracker.finish(ending);
    this.cached = undefined;
  }

  /** When a message holding only the view may be posted; undefined while there is no view. */
  get viewOnlyAt(): number | undefined {
    return this.shownSince === undefined ? undefined : this.shownSince + VIEW_ONLY_AFTER_MS;
  }

  /** The live view, or undefined when it shows nothing. */
  live(): ProgressContent | undefined {
    return this.liveView().view;
  }

  /** The live view and its key ("" and no view when it shows nothing). */
  liveView(): KeyedView {
    this.cached ??= keyed(this.tracker.live());
    return this.cached;
  }

  /** The view the final message keeps, and its key. */
  finalView(): KeyedView {
    return keyed(this.tracker.final());
  }

  /** A view that shows nothing: what clears a view shown before (a native stream has no other way). */
  emptyView(): ProgressContent {
    return { mode: this.tracker.settings.mode === "full" ? "full" : "compact", headline: "", rows: [] };
  }

  /** Markdown to put under the live text, longest first (full, then compact); empty when nothing shows. */
  textForms(): string[] {
    const view = this.inText ? this.live() : undefined;
    if (!view) return [];
    const full = progressText(view, this.style);
    const compact = view.mode === "full" ? compactText(view, this.style) : "";
    return [full, compact].filter((t, i, all) => t !== "" && all.indexOf(t) === i);
  }

  /** The final text's last line when the summary is kept: `_3 tools, 41 s_`; "" otherwise. */
  summaryLine(): string {
    const summary = this.inText && this.tracker.settings.summary ? this.tracker.summary() : undefined;
    return summary ? summaryText(summary, this.style) : "";
  }

  /**
   * What a message posted for the view alone says once the run ended without text: the summary
   * whatever the setting (a message cannot be blank, and a stale view would lie).
   */
  endLine(): string {
    const summary = this.tracker.summary();
    return summaryText(summary ?? `done in ${formatDuration(this.tracker.elapsed())}`, this.style);
  }
}

/** A view, and a key that differs whenever the view does ("" for none). */
export interface KeyedView {
  view: ProgressContent | undefined;
  key: string;
}

function keyed(view: ProgressContent | undefined): KeyedView {
  return { view, key: view ? JSON.stringify(view) : "" };
}
