import { describe, expect, it } from "vitest";
import type { ProgressSettings } from "../../src/config/followups.js";
import { ProgressTracker, REASONING_KEPT, redactText, summarizeArgs, THINKING } from "../../src/core/progress/index.js";
import type { RunEvent } from "../../src/harness/types.js";

const FULL: ProgressSettings = { mode: "full", summary: true, show_reasoning: false };
const COMPACT: ProgressSettings = { mode: "compact", summary: false, show_reasoning: false };

/** A tracker on a clock the test moves. */
function tracked(settings: ProgressSettings) {
  let now = 1_000;
  const tracker = new ProgressTracker(settings, { now: () => now });
  return {
    tracker,
    advance: (ms: number) => {
      now += ms;
    },
    feed: (...events: RunEvent[]) => events.map((e) => tracker.feed(e)),
  };
}

const start = (id: string, name: string, args: unknown = {}): RunEvent => ({ type: "tool_start", id, name, args });
const end = (id: string, name = "x", error = false): RunEvent => ({ type: "tool_end", id, name, output: "", error });

describe("ProgressTracker: compact", () => {
  it("names the current step: well-known tools in words, others by name, a tool's own progress text first", () => {
    const { tracker, feed } = tracked(COMPACT);
    expect(tracker.live()).toBeUndefined();
    feed(start("a", "web_search", { query: "antler docs" }));
    expect(tracker.live()).toEqual({ mode: "compact", headline: "Searching the web…", rows: [] });
    feed(end("a"), start("b", "run_tests"));
    expect(tracker.live()?.headline).toBe("Running tests…");
    feed({ type: "progress", id: "b", text: "Running tests (2/5)" });
    expect(tracker.live()?.headline).toBe("Running tests (2/5)");
    feed(end("b"), start("c", "frobnicate"));
    expect(tracker.live()?.headline).toBe("Running frobnicate…");
  });

  it("says Thinking… between tools until the model writes, then shows nothing", () => {
    const { tracker, feed } = tracked(COMPACT);
    const changed = feed(start("a", "fetch_url"), end("a"));
    expect(changed).toEqual([true, true]);
    expect(tracker.live()?.headline).toBe(THINKING);
    expect(feed({ type: "text", delta: "  " })).toEqual([false]);
    expect(feed({ type: "text", delta: "Here it is" })).toEqual([true]);
    expect(tracker.live()).toBeUndefined();
    expect(feed({ type: "text", delta: " more" })).toEqual([false]);
  });

  it("gives progress text without a tool call id to the newest running call, or else to the headline", () => {
    const { tracker, feed } = tracked(COMPACT);
    feed({ type: "progress", text: "Indexing 3 files" });
    expect(tracker.live()?.headline).toBe("Indexing 3 files");
    feed(start("a", "bash"), start("b", "python"));
    feed({ type: "progress", text: "step 1" });
    expect(tracker.live()?.headline).toBe("step 1");
    feed(end("b"));
    expect(tracker.live()?.headline).toBe("Running a command…");
  });

  it("shows nothing at all when off", () => {
    const { tracker, feed } = tracked({ mode: "off", summary: true, show_reasoning: true });
    expect(feed(start("a", "web_search"), { type: "reasoning", delta: "hmm" }, end("a"))).toEqual([false, false, false]);
    tracker.finish("done");
    expect(tracker.live()).toBeUndefined();
    expect(tracker.final()).toBeUndefined();
    expect(tracker.summary()).toBeUndefined();
  });
});

describe("ProgressTracker: full", () => {
  it("lists tool calls with their state, a short argument summary and their duration", () => {
    const { tracker, feed, advance } = tracked(FULL);
    feed(start("a", "web_search", { query: "antler docs" }));
    advance(1_200);
    feed(end("a"), start("b", "fetch_url", { url: "https://example.com/a", timeout: 5 }));
    advance(400);
    feed(end("b", "fetch_url", true), start("c", "run_tests"), { type: "progress", id: "c", text: "Running tests (2/5)" });
    expect(tracker.live()?.rows).toEqual([
      { id: "a", kind: "tool", title: "web_search", detail: '"antler docs"', state: "done", durationMs: 1_200 },
      {
        id: "b",
        kind: "tool",
        title: "fetch_url",
        detail: 'url="https://example.com/a", timeout=5',
        state: "failed",
        durationMs: 400,
      },
      { id: "c", kind: "tool", title: "run_tests", detail: "Running tests (2/5)", state: "running" },
    ]);
  });

  it("keeps the plan from write_todos, tasks from task, and approvals that wait", () => {
    const { tracker, feed } = tracked(FULL);
    const todos = [
      { content: "Find the docs", status: "completed" },
      { content: "Compare prices", status: "in_progress" },
      { content: "Write it up", status: "pending" },
    ];
    feed(start("p", "write_todos", { todos }), end("p"));
    feed(start("t", "task", { description: "Research competitors", subagent_type: "researcher", prompt: "long…" }));
    const live = tracker.live()!;
    expect(live.rows.map((r) => [r.kind, r.title, r.state])).toEqual([
      ["plan", "Find the docs", "done"],
      ["plan", "Compare prices", "running"],
      ["plan", "Write it up", "pending"],
      ["task", "Research competitors", "running"],
    ]);
    expect(live.headline).toBe("Subagent: Research competitors…");
    feed(end("t"));
    expect(tracker.live()?.headline).toBe("Step 2/3: Compare prices");
    feed({
      type: "clarification",
      interruptId: "i",
      question: "Approve?",
      options: [],
      approval: { requests: [{ name: "send_email", args: { to: "team@example.com" }, allowed: ["approve", "reject"] }] },
    });
    expect(tracker.live()?.rows.at(-1)).toEqual({
      id: "approval-0",
      kind: "approval",
      title: "send_email",
      detail: '"team@example.com"',
      state: "waiting",
    });
    expect(tracker.live()?.headline).toBe("Waiting for approval: send_email");
  });

  it("ends with final states, no headline, no reasoning, and the summary when kept", () => {
    const { tracker, feed, advance } = tracked({ ...FULL, show_reasoning: true });
    feed(start("a", "web_search"), end("a"), start("b", "bash"), start("c", "python"), end("c", "python", true));
    feed({ type: "reasoning", delta: "let me think" });
    expect(tracker.live()?.reasoning).toContain("let me think");
    advance(41_000);
    tracker.finish("done");
    const final = tracker.final()!;
    expect(final.headline).toBe("");
    expect(final.reasoning).toBeUndefined();
    expect(final.rows.map((r) => r.state)).toEqual(["done", "done", "failed"]);
    expect(final.summary).toBe("3 tools (1 failed), 41 s");
    expect(tracker.feed(start("d", "late"))).toBe(false);
  });

  it("marks calls still running as failed when the run failed", () => {
    const { tracker, feed } = tracked(FULL);
    feed(start("a", "bash"));
    tracker.finish("error");
    expect(tracker.final()?.rows[0]?.state).toBe("failed");
  });

  it("has no summary for a run without tool calls, and none in the final view when summary is off", () => {
    const plain = tracked(FULL);
    plain.tracker.finish("done");
    expect(plain.tracker.summary()).toBeUndefined();
    expect(plain.tracker.final()).toBeUndefined();
    const quiet = tracked({ ...FULL, summary: false });
    quiet.feed(start("a", "bash"), end("a"));
    quiet.tracker.finish("done");
    expect(quiet.tracker.final()?.summary).toBeUndefined();
    expect(quiet.tracker.final()?.rows).toHaveLength(1);
  });
});

describe("ProgressTracker: reasoning", () => {
  it("keeps only the newest reasoning text, and only when show_reasoning is on", () => {
    const off = tracked(COMPACT);
    expect(off.feed({ type: "reasoning", delta: "secret plans" })).toEqual([false]);
    expect(off.tracker.live()).toBeUndefined();

    const on = tracked({ ...COMPACT, show_reasoning: true });
    const long = "abcdefghij".repeat(80);
    on.feed({ type: "reasoning", delta: long });
    on.feed(start("a", "bash"), end("a"), { type: "reasoning", delta: "second thought" });
    const reasoning = on.tracker.live()!.reasoning!;
    expect(reasoning.length).toBeLessThanOrEqual(REASONING_KEPT);
    expect(reasoning.endsWith("\n\nsecond thought")).toBe(true);
    expect(on.tracker.live()?.headline).toBe(THINKING);
  });
});

describe("argument summaries", () => {
  it("caps long arguments and keeps them on one line", () => {
    const summary = summarizeArgs({ query: `${"word ".repeat(40)}\nnext line` });
    expect(summary.length).toBeLessThanOrEqual(60);
    expect(summary).not.toContain("\n");
    expect(summary.endsWith("…")).toBe(true);
  });

  it("hides secret keys the logs redact, and any key that names a token, key, password, secret or authorization", () => {
    const summary = summarizeArgs(
      { q: "x", api_key: "abc", Authorization: "Basic zz", dbPassword: "p", keywords: "fine" },
      undefined,
      500,
    );
    expect(summary).toBe('q="x", api_key=[redacted], Authorization=[redacted], dbPassword=[redacted], keywords="fine"');
    expect(summarizeArgs({ token: "abc" })).toBe("token=[redacted]");
  });

  it("hides values that look like credentials wherever they stand", () => {
    const samples = [
      "curl -H 'Authorization: Bearer abcdefghijklmnop1234' https://api.example.com",
      "use sk-proj-abcdefghijklmnopqrstuvwx now",
      "xoxb-1234567890-abcdefghij",
      "https://user:hunter2@example.com/path",
      "https://example.com/cb?code=1&access_token=abc123&x=2",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc",
      "id 9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc",
    ];
    for (const sample of samples) {
      const out = redactText(sample);
      expect(out, sample).toContain("[redacted]");
    }
    expect(redactText("https://user:hunter2@example.com/path")).not.toContain("hunter2");
    expect(redactText("access_token=abc123")).toBe("access_token=[redacted]");
    expect(redactText("search the docs for 'pagination'")).toBe("search the docs for 'pagination'");
  });

  it("hides configured secret values through the logs' scrubber", () => {
    let now = 0;
    const scrub = (t: string) => t.split("hunter2").join("[redacted]");
    const tracker = new ProgressTracker(FULL, { now: () => now++, scrub });
    tracker.feed(start("a", "login", { user: "me", pass_phrase: "hunter2" }));
    tracker.feed({ type: "progress", id: "a", text: "trying hunter2" });
    expect(JSON.stringify(tracker.live())).not.toContain("hunter2");
  });
});
