/** Set-up for the progress view's renderer tests: timed runs, and loopback channels that show the view themselves. */

import type {
  Channel,
  ConversationRef,
  MessageHandle,
  NativeStream,
  OutboundContent,
  ProgressContent,
} from "../../src/channels/types.js";
import type { ProgressSettings } from "../../src/config/followups.js";
import { renderRun } from "../../src/core/render/index.js";
import type { RenderOptions, RenderOutcome } from "../../src/core/render/types.js";
import type { RunEvent } from "../../src/harness/types.js";
import { silentLogger } from "../../src/log/logger.js";
import type { LoopbackChannel } from "../fakes/loopback.js";
import { sleep } from "./helpers.js";

export const FULL: ProgressSettings = { mode: "full", summary: true, show_reasoning: false };
export const OFF: ProgressSettings = { mode: "off", summary: false, show_reasoning: false };

/** A run: events, with pauses (ms) between them. */
export type Step = RunEvent | number;

export async function* timed(steps: Step[]): AsyncGenerator<RunEvent> {
  for (const step of steps) {
    if (typeof step === "number") await sleep(step);
    else yield step;
  }
}

export const text = (delta: string): RunEvent => ({ type: "text", delta });
export const toolStart = (id: string, name: string, args: unknown = {}): RunEvent => ({ type: "tool_start", id, name, args });
export const toolEnd = (id: string, name: string, error = false): RunEvent => ({
  type: "tool_end",
  id,
  name,
  output: "ok",
  error,
});

/** Three tool calls, `ms` apart, each announced and finished. */
export function threeTools(ms: number): Step[] {
  return [
    toolStart("a", "web_search", { query: "antler docs" }),
    ms,
    toolEnd("a", "web_search"),
    toolStart("b", "fetch_url", { url: "https://example.com/docs" }),
    ms,
    toolEnd("b", "fetch_url"),
    toolStart("c", "run_tests"),
    ms,
    toolEnd("c", "run_tests"),
  ];
}

/** `parts` words of text, `gapMs` apart. */
export function words(parts: number, gapMs: number): Step[] {
  return Array.from({ length: parts }, (_, i) => [gapMs, text(`word${i} `)]).flat();
}

export function renderSteps(
  channel: Channel,
  ref: ConversationRef,
  steps: Step[],
  progress: ProgressSettings,
  options: Partial<RenderOptions> = {},
): Promise<RenderOutcome> {
  const all = [...steps, { type: "done", text: "" } as RunEvent];
  return renderRun(timed(all), { channel, ref, logger: silentLogger(), questionId: "q1", progress, ...options });
}

/** One call a view-showing channel got: what it showed, and when. */
export interface ViewCall {
  op: "send" | "edit" | "update" | "progress" | "finish";
  at: number;
  text?: string;
  progress?: ProgressContent;
}

/**
 * The loopback channel with a view of its own (`capabilities.progressView`): it records each
 * send's and edit's `content.progress`. The world refuses blank text, so a message posted for
 * the view alone is stored with a placeholder; `calls` has what was really sent.
 */
export class ViewChannel implements Channel {
  readonly calls: ViewCall[] = [];
  readonly name: string;
  readonly capabilities: Channel["capabilities"];

  constructor(private readonly inner: LoopbackChannel) {
    this.name = inner.name;
    this.capabilities = { ...inner.capabilities, progressView: true };
  }

  start = (sink: Parameters<Channel["start"]>[0]) => this.inner.start(sink);
  stop = () => this.inner.stop();
  status = () => this.inner.status();

  async send(ref: ConversationRef, content: OutboundContent): Promise<MessageHandle> {
    const handle = await this.inner.send(ref, { ...content, text: content.text || "⋯" });
    this.calls.push({ op: "send", at: Date.now(), text: content.text, ...view(content.progress) });
    return handle;
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    await this.inner.edit(handle, { ...content, text: content.text || "⋯" });
    this.calls.push({ op: "edit", at: Date.now(), text: content.text, ...view(content.progress) });
  }
}

/** Gives the loopback channel's native streams `progress()`; every stream call is recorded. */
export function withStreamProgress(channel: LoopbackChannel): ViewCall[] {
  const calls: ViewCall[] = [];
  const open = channel.startStream!;
  channel.startStream = async (ref: ConversationRef): Promise<NativeStream | undefined> => {
    const stream = await open(ref);
    if (!stream) return undefined;
    const note = (op: ViewCall["op"], extra: Partial<ViewCall>) => calls.push({ op, at: Date.now(), ...extra });
    return {
      handle: stream.handle,
      update: async (t) => {
        await stream.update(t);
        note("update", { text: t });
      },
      finish: async (t) => {
        await stream.finish(t);
        note("finish", { text: t });
      },
      abort: (t) => stream.abort(t),
      progress: async (v) => {
        note("progress", { progress: structuredClone(v) });
      },
    };
  };
  return calls;
}

function view(progress: ProgressContent | undefined): { progress?: ProgressContent } {
  return progress ? { progress: structuredClone(progress) } : {};
}

/** The time between each call and the one before it. */
export function gaps(at: number[]): number[] {
  return at.slice(1).map((t, i) => t - at[i]!);
}
