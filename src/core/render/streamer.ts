/**
 * `renderRun`: one run's events, rendered into the chat.
 *
 * - `text` deltas stream into messages (or native streams) through the {@link ReplyWriter}.
 * - Every event also feeds the reply's progress view (src/core/progress/, `options.progress`):
 *   tool calls, their own progress text, the plan, subagent tasks, approvals, reasoning. It shows
 *   under the live text, in the channel's own view, or through a native stream's `progress()`;
 *   the final text never holds it, only its summary line when that is kept.
 * - `clarification` completes the text so far, then posts the question.
 * - `error` completes the text so far, then posts `⚠️ <message>`. An event stream that throws
 *   is reported as code `internal` with a generic notice; the cause goes to the log.
 * - `done` completes the reply. Its `text` is used only where it extends what was streamed
 *   (a backend that streamed nothing, or not all); what the user saw is never rewritten. Its
 *   `limit` (a run cut short) goes back in the outcome, for the turn's notice.
 */
import { ChannelError, errorMessage } from "../../errors.js";
import type { Clarification, RunEvent, RunLimit } from "../../harness/types.js";
import type { Logger } from "../../log/logger.js";
import { noticeMarkdown, postChunked } from "./notice.js";
import { Outbound } from "./outbound.js";
import { questionContent } from "./question.js";
import { ReplyWriter } from "./reply.js";
import { ReplyProgress } from "./reply-progress.js";
import { editInterval, type RenderOptions, type RenderOutcome } from "./types.js";
import { TypingLoop } from "./typing.js";

const INTERNAL_NOTICE = "Something went wrong while answering. Please try again.";

type Ending =
  | { type: "done"; limit?: RunLimit }
  | ({ type: "clarification" } & Clarification)
  | { type: "error"; code: string; message: string; notice: string };

/**
 * Renders one run into the conversation at `options.ref` and resolves once everything the user
 * must see has been delivered. Throws only when a final text could not be delivered at all.
 */
export async function renderRun(events: AsyncIterable<RunEvent>, options: RenderOptions): Promise<RenderOutcome> {
  const { channel, ref, logger, hooks = {} } = options;
  const out = new Outbound(channel, hooks, editInterval(channel, ref), options.callTimeoutMs, options.retryBudgetMs);
  const typing = options.typing ?? new TypingLoop(channel, ref, logger);
  typing.useGate(out);
  let visible = false;
  const onVisible = () => {
    if (visible) return;
    visible = true;
    void typing.stop();
    hooks.onFirstVisible?.();
  };
  const progress = new ReplyProgress(channel, options.progress, options.scrub);
  const writer = new ReplyWriter({ channel, ref, logger, out, onVisible, progress });
  typing.start();
  try {
    const ending = await consume(events, writer, logger);
    const messages = await writer.finish(ending.type);
    if (ending.type === "done") {
      return { kind: "done", text: writer.current, messages, ...(ending.limit ? { limit: ending.limit } : {}) };
    }
    await typing.stop();
    if (ending.type === "error") {
      await postChunked(out, ref, { text: noticeMarkdown(channel, `⚠️ ${ending.notice}`) });
      onVisible();
      return { kind: "error", code: ending.code, message: ending.message, messages };
    }
    const { type: _type, ...clarification } = ending;
    const posted = await postChunked(out, ref, questionContent(channel, clarification, options.questionId));
    const question = posted.at(-1);
    if (!question) throw new ChannelError(channel.name, "content_rejected", "the question has no text to post");
    onVisible();
    return { kind: "clarification", clarification, question, messages };
  } finally {
    await typing.stop();
  }
}

/** Feeds the events to the writer until the run ends (or the reply can no longer be delivered). */
async function consume(events: AsyncIterable<RunEvent>, writer: ReplyWriter, logger: Logger): Promise<Ending> {
  try {
    for await (const event of events) {
      writer.progress(event);
      switch (event.type) {
        case "text":
          writer.append(event.delta);
          break;
        case "done":
          if (event.text.length > writer.current.length && event.text.startsWith(writer.current)) {
            writer.append(event.text.slice(writer.current.length));
          }
          return event.limit ? { type: "done", limit: event.limit } : { type: "done" };
        case "clarification":
          return event;
        case "error":
          return { type: "error", code: event.code, message: event.message, notice: event.message };
      }
      // The platform refused the reply for good; finish() reports why. Stop pulling events.
      if (writer.failed) return { type: "done" };
    }
    return { type: "done" };
  } catch (err) {
    logger.error({ err }, "the run's event stream failed");
    return { type: "error", code: "internal", message: errorMessage(err), notice: INTERNAL_NOTICE };
  }
}
