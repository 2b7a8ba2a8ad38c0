/**
 * What the dispatcher hands the renderer and gets back. The renderer turns one run's events
 * into chat messages; it owns pacing, chunking, typing and platform-error handling for them.
 */

import type { Channel, ConversationRef, MessageHandle } from "../../channels/types.js";
import type { ProgressSettings } from "../../config/followups.js";
import type { Clarification, RunLimit } from "../../harness/types.js";
import type { Logger } from "../../log/logger.js";
import type { RenderHooks } from "./hooks.js";
import type { TypingLoop } from "./typing.js";

export type { RenderHooks };

export interface RenderOptions {
  channel: Channel;
  /** Where the reply goes. */
  ref: ConversationRef;
  logger: Logger;
  hooks?: RenderHooks;
  /** Short id the question's buttons carry (the dispatcher stores it with the pending question). */
  questionId: string;
  /** A platform call unanswered after this long counts as failed (default 30 s). */
  callTimeoutMs?: number;
  /**
   * The typing indicator, when the caller started it already (e.g. while the message waited for
   * a run slot). Without one the renderer shows one at once.
   */
  typing?: TypingLoop;
  /** How long the final text is retried on 5xx and network errors before it is given up (default 60 s). */
  retryBudgetMs?: number;
  /** What the reply shows of the agent's work (src/core/progress/); absent = compact, no summary, no reasoning. */
  progress?: ProgressSettings;
  /** Hides configured secret values in what the progress view shows (the logs' scrubber); credential-looking values are hidden anyway. */
  scrub?: (text: string) => string;
}

/**
 * How a rendered run ended. `messages` are the reply's text messages, oldest first; the
 * question and the error notice are not among them.
 */
export type RenderOutcome =
  /**
   * The run finished; `text` is the whole reply exactly as the agent wrote and the chat shows it
   * (empty if it said nothing), without the progress view's summary line. `limit`: a limit of the
   * agent's cut the run short (the turn posts a notice).
   */
  | { kind: "done"; text: string; messages: MessageHandle[]; limit?: RunLimit }
  /** The run paused on a question, now posted as `question`. */
  | { kind: "clarification"; clarification: Clarification; question: MessageHandle; messages: MessageHandle[] }
  /**
   * The run failed and a notice was posted. `message` is the run's error message, or for a
   * failing event stream (`code` "internal") the underlying error's text, which the chat does
   * not see: it gets a generic notice instead.
   */
  | { kind: "error"; code: string; message: string; messages: MessageHandle[] };

/** Minimum time between two calls that change one reply, for this conversation. */
export function editInterval(channel: Channel, ref: ConversationRef): number {
  return channel.editIntervalMs?.(ref) ?? channel.capabilities.minEditIntervalMs;
}
