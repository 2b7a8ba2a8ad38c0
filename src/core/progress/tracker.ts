/**
 * The progress of one run, from its events: which tool calls ran (with their timings and their
 * own progress text), the plan when the agent keeps a to-do list (`write_todos`), subagent tasks
 * (`task`), approvals that wait, and the reasoning text. It answers with a {@link ProgressContent}
 * snapshot: the live one while the run goes, the final one once it ended. Pure: no platform, no
 * timers; the clock is injected.
 */
import type { ProgressContent, ProgressRow } from "../../channels/types.js";
import type { ProgressSettings } from "../../config/followups.js";
import type { Clarification, RunEvent } from "../../harness/types.js";
import { MAX_DETAIL, MAX_TITLE, safeText, summarizeArgs } from "./args.js";
import { PLAN_TOOL, QUESTION_TOOL, TASK_TOOL, taskHeadline, toolHeadline } from "./headlines.js";
import { formatDuration } from "./text.js";

/** How much reasoning text the view keeps: its newest characters. */
export const REASONING_KEPT = 500;

/** Shown while the model works between tool calls and has not written since. */
export const THINKING = "Thinking…";

export interface TrackerOptions {
  /** The clock (ms); `Date.now` by default. */
  now?: () => number;
  /** Replaces configured secret values in what the view shows (the logs' scrubber). */
  scrub?: (text: string) => string;
}

/** How a run ended, for the final states of rows still running. */
export type RunEnding = "done" | "error" | "clarification";

interface Call {
  id: string;
  kind: "tool" | "task";
  /** The tool's name, or the task's description. */
  title: string;
  /** The arguments in a few words. */
  args: string;
  /** The tool's latest own progress text. */
  said?: string;
  startedAt: number;
  endedAt?: number;
  state: "running" | "done" | "failed";
}

const PLAN_STATES: Record<string, ProgressRow["state"]> = { completed: "done", in_progress: "running", pending: "pending" };

export class ProgressTracker {
  private readonly now: () => number;
  private readonly scrub: ((text: string) => string) | undefined;
  private readonly startedAt: number;
  private endedAt: number | undefined;
  private readonly calls = new Map<string, Call>();
  private plan: ProgressRow[] = [];
  private approvals: ProgressRow[] = [];
  /** Progress text no running call claimed. */
  private loose: string | undefined;
  private reasoning = "";
  /** A tool started or ended since the last reasoning: the next reasoning starts a new paragraph. */
  private reasoningBreak = false;
  /** The model worked (a call ended, or it reasoned) and wrote no text since. */
  private working = false;

  constructor(
    readonly settings: ProgressSettings,
    options: TrackerOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.scrub = options.scrub;
    this.startedAt = this.now();
  }

  get off(): boolean {
    return this.settings.mode === "off";
  }

  private get mode(): ProgressContent["mode"] | undefined {
    return this.settings.mode === "off" ? undefined : this.settings.mode;
  }

  /** Takes in one run event. True when what the view shows may have changed. */
  feed(event: RunEvent): boolean {
    if (this.off || this.endedAt !== undefined) return false;
    switch (event.type) {
      case "text": {
        if (!event.delta.trim()) return false;
        const changed = this.working || this.loose !== undefined;
        this.working = false;
        this.loose = undefined;
        return changed;
      }
      case "tool_start":
        return this.start(event.id, event.name, event.args);
      case "tool_end":
        return this.end(event.id, event.error);
      case "progress":
        return this.said(event.text, event.id);
      case "reasoning":
        return this.reason(event.delta);
      case "clarification":
        return this.waitFor(event);
      default:
        return false;
    }
  }

  /** The run ended: rows still running take their final state, and the clock stops. */
  finish(ending: RunEnding): void {
    if (this.endedAt !== undefined) return;
    this.endedAt = this.now();
    for (const call of this.calls.values()) {
      if (call.state !== "running") continue;
      call.state = ending === "error" ? "failed" : "done";
      call.endedAt = this.endedAt;
    }
  }

  /** What the view shows now; undefined when off or when there is nothing to show. */
  live(): ProgressContent | undefined {
    const mode = this.mode;
    if (!mode) return undefined;
    const headline = this.endedAt === undefined ? this.headline() : "";
    const rows = mode === "full" ? this.rows() : [];
    const reasoning = this.settings.show_reasoning && this.endedAt === undefined ? this.reasoning : "";
    if (!headline && rows.length === 0 && !reasoning) return undefined;
    return { mode, headline, rows, ...(reasoning ? { reasoning } : {}) };
  }

  /**
   * The view the final message keeps: no headline, rows in their final states (full), the summary
   * when `summary` is on; never the reasoning. Undefined when that is nothing.
   */
  final(): ProgressContent | undefined {
    const mode = this.mode;
    if (!mode) return undefined;
    const rows = mode === "full" ? this.rows() : [];
    const summary = this.settings.summary ? this.summary() : undefined;
    if (rows.length === 0 && !summary) return undefined;
    return { mode, headline: "", rows, ...(summary ? { summary } : {}) };
  }

  /** What the run did, in a few words ("3 tools, 41 s"); undefined when it called no tool. */
  summary(): string | undefined {
    if (this.off) return undefined;
    const calls = [...this.calls.values()];
    const tools = calls.filter((c) => c.kind === "tool").length;
    const tasks = calls.length - tools;
    if (calls.length === 0) return undefined;
    const failed = calls.filter((c) => c.state === "failed").length;
    const parts: string[] = [];
    if (tools > 0) parts.push(`${tools} ${tools === 1 ? "tool" : "tools"}`);
    if (tasks > 0) parts.push(`${tasks} ${tasks === 1 ? "task" : "tasks"}`);
    const what = parts.join(", ") + (failed > 0 ? ` (${failed} failed)` : "");
    return `${what}, ${formatDuration(this.elapsed())}`;
  }

  /** How long the run took (so far). */
  elapsed(): number {
    return (this.endedAt ?? this.now()) - this.startedAt;
  }

  private start(id: string, name: string, args: unknown): boolean {
    this.loose = undefined;
    this.working = false;
    this.reasoningBreak = true;
    if (name === QUESTION_TOOL) return false;
    if (name === PLAN_TOOL) return this.setPlan(args);
    const task = name === TASK_TOOL;
    const call: Call = {
      id,
      kind: task ? "task" : "tool",
      title: task ? this.taskTitle(args) : safeText(name, MAX_TITLE),
      args: task ? "" : summarizeArgs(args, this.scrub),
      startedAt: this.now(),
      state: "running",
    };
    // A backend that reports a start twice keeps the first row.
    if (!this.calls.has(id)) this.calls.set(id, call);
    return true;
  }

  private end(id: string, error: boolean): boolean {
    this.reasoningBreak = true;
    const call = this.calls.get(id);
    if (call?.state !== "running") return false;
    call.state = error ? "failed" : "done";
    call.endedAt = this.now();
    call.said = undefined;
    this.working = true;
    return true;
  }

  private said(text: string, id: string | undefined): boolean {
    const words = safeText(text, MAX_DETAIL, this.scrub);
    if (!words) return false;
    const call = id !== undefined ? this.calls.get(id) : this.latestRunning();
    if (call && call.state === "running") {
      if (call.said === words) return false;
      call.said = words;
      return true;
    }
    if (this.loose === words) return false;
    this.loose = words;
    return true;
  }

  private reason(delta: string): boolean {
    if (!this.settings.show_reasoning || !delta) return false;
    const joined = this.reasoningBreak && this.reasoning ? `${this.reasoning}\n\n${delta.trimStart()}` : this.reasoning + delta;
    this.reasoningBreak = false;
    this.reasoning = joined.length > REASONING_KEPT ? joined.slice(-REASONING_KEPT) : joined;
    this.working = true;
    return true;
  }

  private waitFor(event: Clarification): boolean {
    const requests = event.approval?.requests ?? [];
    this.approvals = requests.map((r, i) => ({
      id: `approval-${i}`,
      kind: "approval",
      title: safeText(r.name, MAX_TITLE),
      ...detail(summarizeArgs(r.args, this.scrub)),
      state: "waiting",
    }));
    return requests.length > 0;
  }

  private setPlan(args: unknown): boolean {
    const todos = (args as { todos?: unknown } | undefined)?.todos;
    if (!Array.isArray(todos)) return false;
    this.plan = todos.flatMap((todo: unknown, i) => {
      const { content, status } = (todo ?? {}) as { content?: unknown; status?: unknown };
      if (typeof content !== "string" || !content.trim()) return [];
      const state = PLAN_STATES[typeof status === "string" ? status : ""] ?? "pending";
      return [{ id: `plan-${i}`, kind: "plan" as const, title: safeText(content, MAX_TITLE, this.scrub), state }];
    });
    return true;
  }

  private taskTitle(args: unknown): string {
    const { description, subagent_type } = (args ?? {}) as { description?: unknown; subagent_type?: unknown };
    const title = typeof description === "string" && description.trim() ? description : subagent_type;
    return typeof title === "string" && title.trim() ? safeText(title, MAX_TITLE, this.scrub) : "subagent task";
  }

  private latestRunning(): Call | undefined {
    return [...this.calls.values()].reverse().find((c) => c.state === "running");
  }

  private headline(): string {
    if (this.approvals.length > 0) return `Waiting for approval: ${this.approvals.map((a) => a.title).join(", ")}`;
    const running = this.latestRunning();
    if (running) return running.said ?? (running.kind === "task" ? taskHeadline(running.title) : toolHeadline(running.title));
    if (this.loose) return this.loose;
    if (!this.working) return "";
    const step = this.plan.findIndex((r) => r.state === "running");
    return step >= 0 ? `Step ${step + 1}/${this.plan.length}: ${this.plan[step]!.title}` : THINKING;
  }

  private rows(): ProgressRow[] {
    const calls = [...this.calls.values()].map(
      (c): ProgressRow => ({
        id: c.id,
        kind: c.kind,
        title: c.title,
        ...detail(c.state === "running" && c.said ? c.said : c.args),
        state: c.state,
        ...(c.endedAt !== undefined ? { durationMs: c.endedAt - c.startedAt } : {}),
      }),
    );
    return [...this.plan, ...calls, ...this.approvals];
  }
}

function detail(text: string): { detail?: string } {
  return text ? { detail: text } : {};
}
