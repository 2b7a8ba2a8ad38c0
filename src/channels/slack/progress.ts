/**
 * The progress view on a Slack stream, with what Slack itself offers beside streamed text:
 * - the current step as the thread's status line (`assistant.threads.setStatus`), in both modes,
 *   cleared once the run ended;
 * - in `full`, each row as a task card: a `task_update` chunk on `chat.appendStream` (Slack shows
 *   them in the reply's timeline), sent again only when its title or state changed. A row's
 *   `details` and `output` (its duration) are each sent once, so the card reads the same whether
 *   Slack replaces those fields or adds to them;
 * - in `compact` where Slack refuses the status line, one task card that carries the step.
 * A refused status or chunk is logged and not tried again for this reply (rate limits go back to
 * the core). Reasoning is not shown: no field of a task can be replaced with the growing text.
 */
import type { webApi } from "@slack/bolt";
import { PlatformRateLimitError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { formatDuration, progressEnded, progressTitle, rowEnded, rowLabel } from "../kit/progress.js";
import type { MessageHandle, ProgressContent, ProgressRow } from "../types.js";
import { mapSlackError } from "./map-error.js";

type WebClient = InstanceType<typeof webApi.WebClient>;
type TaskStatus = "pending" | "in_progress" | "complete" | "error";

/** A `task_update` chunk, as `chat.appendStream` takes it. */
export interface TaskChunk {
  type: "task_update";
  id: string;
  title: string;
  status: TaskStatus;
  details?: string;
  output?: string;
}

const STATUS: Record<ProgressRow["state"], TaskStatus> = {
  running: "in_progress",
  done: "complete",
  failed: "error",
  pending: "pending",
  waiting: "pending",
};

/** The one task of a compact view shown without a status line. */
const STEP_TASK = "antler_step";

interface SentTask {
  title: string;
  status: TaskStatus;
  details: boolean;
  output: boolean;
}

export class SlackProgress {
  /** The last view given, for a reply edited whole (the stream broke) and for the summary at the end. */
  view: ProgressContent | undefined;
  private status = "";
  private statusRefused = false;
  private chunksRefused = false;
  private readonly sent = new Map<string, SentTask>();

  constructor(
    private readonly web: WebClient,
    private readonly channelName: string,
    private readonly handle: MessageHandle,
    private readonly logger: Logger,
  ) {}

  /** Shows `view`; `streaming` is false once the stream broke, and then only the status line is used. */
  async show(view: ProgressContent, streaming: boolean): Promise<void> {
    this.view = view;
    await this.showStatus(progressEnded(view) ? "" : view.headline);
    if (!streaming || this.chunksRefused) return;
    const chunks = this.chunks(view);
    if (chunks.length === 0) return;
    try {
      await this.web.chat.appendStream({ channel: this.handle.ref.chatId, ts: this.handle.id, chunks });
    } catch (err) {
      this.refused(err, "chat.appendStream");
      this.chunksRefused = true;
      return;
    }
    for (const chunk of chunks) this.note(chunk);
  }

  /** The task chunks that differ from what Slack shows. */
  chunks(view: ProgressContent): TaskChunk[] {
    const tasks = view.mode === "full" ? view.rows.map(taskOf) : this.stepTask(view);
    return tasks.flatMap((task) => {
      const before = this.sent.get(task.id);
      const chunk: TaskChunk = { type: "task_update", id: task.id, title: task.title, status: task.status };
      if (task.details && !before?.details) chunk.details = task.details;
      if (task.output && !before?.output) chunk.output = task.output;
      const same = before && before.title === task.title && before.status === task.status;
      return same && !chunk.details && !chunk.output ? [] : [chunk];
    });
  }

  private stepTask(view: ProgressContent): TaskChunk[] {
    const title = progressTitle(view);
    if (!this.statusRefused || !title) return [];
    return [{ type: "task_update", id: STEP_TASK, title, status: progressEnded(view) ? "complete" : "in_progress" }];
  }

  private note(chunk: TaskChunk): void {
    const before = this.sent.get(chunk.id);
    this.sent.set(chunk.id, {
      title: chunk.title,
      status: chunk.status,
      details: Boolean(before?.details || chunk.details),
      output: Boolean(before?.output || chunk.output),
    });
  }

  private async showStatus(status: string): Promise<void> {
    const threadTs = this.handle.ref.threadId;
    if (this.statusRefused || status === this.status || !threadTs) return;
    try {
      await this.web.assistant.threads.setStatus({ channel_id: this.handle.ref.chatId, thread_ts: threadTs, status });
      this.status = status;
    } catch (err) {
      this.refused(err, "assistant.threads.setStatus");
      this.statusRefused = true;
    }
  }

  /** Rate limits go back to the core, which calls again; any other refusal is final for this reply. */
  private refused(err: unknown, method: string): void {
    const mapped = mapSlackError(this.channelName, err, method);
    if (mapped instanceof PlatformRateLimitError) throw mapped;
    this.logger.warn({ err: mapped.message, ts: this.handle.id }, `slack refused ${method} for the progress view`);
  }
}

function taskOf(row: ProgressRow): TaskChunk {
  const task: TaskChunk = { type: "task_update", id: row.id, title: rowLabel(row), status: STATUS[row.state] };
  if (row.detail) task.details = row.detail;
  if (rowEnded(row) && row.durationMs !== undefined) task.output = formatDuration(row.durationMs);
  return task;
}
