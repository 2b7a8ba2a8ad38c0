import { describe, expect, it } from "vitest";
import { literalMarkdown } from "../../src/channels/markdown/literal.js";
import type { ProgressContent, ProgressRow } from "../../src/channels/types.js";
import { formatDuration, MAX_ROWS, progressText, summaryText, type TextStyle } from "../../src/core/progress/index.js";

const MD: TextStyle = { literal: literalMarkdown, markdown: true };
const PLAIN: TextStyle = { literal: (t) => t, markdown: false };

const tool = (id: string, state: ProgressRow["state"], extra: Partial<ProgressRow> = {}): ProgressRow => ({
  id,
  kind: "tool",
  title: `tool_${id}`,
  state,
  ...extra,
});

describe("progress as text", () => {
  it("compact is one italic line with the headline, escaped", () => {
    const view: ProgressContent = { mode: "compact", headline: "Running *run_tests*…", rows: [] };
    expect(progressText(view, MD)).toBe("⏳ _Running \\*run_tests\\*…_");
    expect(progressText(view, PLAIN)).toBe("⏳ Running *run_tests*…");
    expect(progressText({ mode: "compact", headline: "", rows: [] }, MD)).toBe("");
  });

  it("full lists rows with their state, details and durations, one per line", () => {
    const view: ProgressContent = {
      mode: "full",
      headline: "Running tests (2/5)",
      rows: [
        { id: "p0", kind: "plan", title: "Find docs", state: "done" },
        { id: "p1", kind: "plan", title: "Compare", state: "running" },
        { id: "p2", kind: "plan", title: "Write", state: "pending" },
        tool("a", "done", { title: "web_search", detail: '"antler docs"', durationMs: 1_234 }),
        tool("b", "failed", { title: "fetch", durationMs: 400 }),
        tool("c", "running", { title: "run_tests", detail: "Running tests (2/5)" }),
        { id: "t", kind: "task", title: "Research", state: "done", durationMs: 12_000 },
        { id: "x", kind: "approval", title: "send_email", detail: '"team@example.com"', state: "waiting" },
      ],
    };
    expect(progressText(view, MD).split("  \n")).toEqual([
      "☑ Find docs",
      "☐ **Compare**",
      "☐ Write",
      '✓ web_search · "antler docs" · 1.2 s',
      "✗ fetch · 0.4 s",
      "⏳ run_tests · Running tests (2/5)",
      "✓ subagent: Research · 12 s",
      '⏸ waiting for approval: send_email · "team@example.com"',
    ]);
  });

  it("full shows the headline only when no row is busy", () => {
    const rows = [tool("a", "done", { durationMs: 100 })];
    expect(progressText({ mode: "full", headline: "Thinking…", rows }, MD)).toBe("✓ tool_a · 0.1 s  \n⏳ _Thinking…_");
  });

  it(`lists at most ${MAX_ROWS} rows, busy ones first, and counts the rest`, () => {
    const rows = Array.from({ length: 12 }, (_, i) =>
      i === 1 ? tool("1", "running") : tool(String(i), "done", { durationMs: 100 }),
    );
    const lines = progressText({ mode: "full", headline: "", rows }, PLAIN).split("\n");
    expect(lines).toHaveLength(MAX_ROWS + 1);
    expect(lines[0]).toBe("⏳ tool_1");
    expect(lines.at(-2)).toBe("✓ tool_11 · 0.1 s");
    expect(lines.at(-1)).toBe("… and 4 more");
  });

  it("quotes the tail of the reasoning", () => {
    const reasoning = `${"x".repeat(300)} the end`;
    const text = progressText({ mode: "compact", headline: "Thinking…", rows: [], reasoning }, MD);
    const [line, quote] = text.split("\n\n");
    expect(line).toBe("⏳ _Thinking…_");
    expect(quote!.startsWith("> 💭 …")).toBe(true);
    expect(quote!.endsWith("the end")).toBe(true);
    expect(quote!.length).toBeLessThan(220);
  });

  it("writes the summary line and durations", () => {
    expect(summaryText("3 tools, 41 s", MD)).toBe("_3 tools, 41 s_");
    expect(summaryText("3 tools, 41 s", PLAIN)).toBe("3 tools, 41 s");
    expect([360, 1_234, 41_400, 125_000, 120_000].map(formatDuration)).toEqual(["0.4 s", "1.2 s", "41 s", "2 min 5 s", "2 min"]);
  });
});
