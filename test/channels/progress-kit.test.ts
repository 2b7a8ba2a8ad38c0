/**
 * The progress view's shared words (src/channels/kit/progress.ts): durations as people read
 * them, rows and views as Markdown that every emitter shows literally, and which views are left
 * to show once a run ended.
 */
import { describe, expect, it } from "vitest";
import { feishuEmitter } from "../../src/channels/feishu/format.js";
import {
  formatDuration,
  progressLines,
  progressMarkdown,
  progressShows,
  reasoningTail,
  rowMarkdown,
} from "../../src/channels/kit/progress.js";
import { plainEmitter, renderMarkdown } from "../../src/channels/markdown/index.js";
import type { ProgressContent } from "../../src/channels/types.js";

const view = (extra: Partial<ProgressContent> = {}): ProgressContent => ({
  mode: "full",
  headline: "Searching…",
  rows: [
    { id: "1", kind: "tool", title: "web_search", detail: "q", state: "done", durationMs: 1234 },
    { id: "2", kind: "approval", title: "deploy", state: "waiting" },
  ],
  ...extra,
});

describe("progress kit", () => {
  it("writes durations as people read them", () => {
    expect([400, 1234, 9_960, 41_000, 59_600, 125_000, 180_000, 3_780_000, 7_200_000].map(formatDuration)).toEqual([
      "0.4 s",
      "1.2 s",
      "10 s",
      "41 s",
      "1 min",
      "2 min 5 s",
      "3 min",
      "1 h 3 min",
      "2 h",
    ]);
  });

  it("makes tool titles and details literal: markup in them shows as written", () => {
    const row = {
      id: "x",
      kind: "tool" as const,
      title: "*bold*_tool",
      detail: "[link](http://x)\n# not a heading",
      state: "failed" as const,
      durationMs: 500,
    };
    const markdown = rowMarkdown(row);
    expect(renderMarkdown(markdown, plainEmitter)).toBe("✗ *bold*_tool · [link](http://x) # not a heading · 0.5 s");
    expect(renderMarkdown(markdown, feishuEmitter)).not.toContain("**");
  });

  it("shows a duration only once a row ended, and the rows only in full", () => {
    expect(progressMarkdown(view())).toBe("⏳ Searching…\n\n✓ web_search · q · 1.2 s  \n⏸ waiting for approval: deploy");
    expect(progressMarkdown(view({ mode: "compact" }))).toBe("⏳ Searching…");
  });

  it("keeps an ended view only with its summary; lines then show the summary alone", () => {
    expect(progressShows(view({ headline: "" }))).toBe(false);
    expect(progressShows(view({ headline: "", summary: "2 tools, 1 s" }))).toBe(true);
    expect(progressLines(view({ headline: "", summary: "2 tools, 1 s" }))).toBe("✓ 2 tools, 1 s");
    expect(progressLines(view({ headline: "" }))).toBe("");
    expect(progressLines(undefined)).toBe("");
  });

  it("cuts long reasoning from its start, marked", () => {
    expect(reasoningTail("abcdef", 10)).toBe("abcdef");
    expect(reasoningTail("abcdefghij-klm", 5)).toBe("…-klm");
  });
});
