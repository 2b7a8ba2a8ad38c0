import { describe, expect, it } from "vitest";
import { VIEW_ONLY_AFTER_MS } from "../../src/core/render/reply-progress.js";
import { loopback } from "./helpers.js";
import {
  FULL,
  gaps,
  OFF,
  renderSteps,
  type Step,
  text,
  threeTools,
  toolEnd,
  toolStart,
  ViewChannel,
  withStreamProgress,
  words,
} from "./progress-helpers.js";

const ROWS = ['✓ web_search · "antler docs" ·', '✓ fetch_url · "https://example.com/docs" ·', "✓ run_tests ·"];

describe("renderRun: the progress view as text", () => {
  it("full: each tool's row shows with ✓ while the text streams; the final text keeps only the summary", async () => {
    const interval = 40;
    const { world, channel, ref } = loopback({ minEditIntervalMs: interval, enforceEditInterval: true });
    const steps: Step[] = [text("Let me check. "), ...threeTools(120), ...words(12, 25)];
    const outcome = await renderSteps(channel, ref, steps, FULL);

    const [message, ...others] = world.botMessages();
    expect(others).toEqual([]);
    const all = message!.versions.find((v) => ROWS.every((row) => v.text.includes(row)));
    expect(all, "a version with every row ticked").toBeDefined();
    expect(message!.versions.some((v) => v.text.includes("⏳ run_tests"))).toBe(true);
    const body = `Let me check. ${Array.from({ length: 12 }, (_, i) => `word${i} `).join("")}`;
    expect(message!.text).toMatch(/^Let me check\. word0 .* word11\n\n_3 tools, \d+\.\d s_$/s);
    expect(message!.text).not.toContain("✓");
    expect(outcome).toMatchObject({ kind: "done", text: body, messages: [{ id: message!.id }] });
    expect(world.calls.filter((c) => c.op === "rejected")).toEqual([]);
  });

  it("off: shows nothing, not even a tool line, and posts nothing before the text", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const steps: Step[] = [toolStart("a", "web_search"), VIEW_ONLY_AFTER_MS + 200, toolEnd("a", "web_search"), text("Hi"), 80];
    steps.push(toolStart("b", "bash"), 150, toolEnd("b", "bash"), text(" there."));
    await renderSteps(channel, ref, steps, OFF);

    const [message] = world.botMessages();
    expect(world.botMessages()).toHaveLength(1);
    expect(message!.versions.every((v) => !v.text.includes("⏳") && !v.text.includes("✓"))).toBe(true);
    expect(message!.versions.map((v) => v.text).every((t) => "Hi there.".startsWith(t))).toBe(true);
    expect(message!.text).toBe("Hi there.");
  });

  it("keeps the pace when progress events come every few ms", async () => {
    const interval = 100;
    const { world, channel, ref } = loopback({ minEditIntervalMs: interval, enforceEditInterval: true });
    const chatter: Step[] = Array.from({ length: 150 }, (_, i) => [
      4,
      { type: "progress" as const, id: "t", text: `step ${i}` },
    ]).flat();
    const steps: Step[] = [
      text("Working on it."),
      toolStart("t", "run_tests"),
      ...chatter,
      toolEnd("t", "run_tests"),
      text(" Done."),
    ];
    const started = Date.now();
    await renderSteps(channel, ref, steps, FULL);

    const message = world.botMessages()[0]!;
    const at = message.versions.map((v) => v.at);
    for (const gap of gaps(at)) expect(gap).toBeGreaterThanOrEqual(interval);
    expect(message.versions.length - 1).toBeLessThanOrEqual((at.at(-1)! - started) / interval + 2);
    expect(message.versions.some((v) => /⏳ run_tests · step \d+/.test(v.text))).toBe(true);
    expect(world.calls.filter((c) => c.op === "rejected")).toEqual([]);
  });

  it("shortens the view, then drops it, never the text, when text and view would not fit the limit", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 20, maxTextLength: 300 });
    // 236 characters stay in the live message (the limit less its reserve); the full view never fits beside them.
    const long = "x".repeat(236);
    const said = { type: "progress" as const, id: "a", text: "p".repeat(70) };
    const steps: Step[] = [text(long), toolStart("a", "web_search", { query: "q".repeat(50) }), 150, said, 150];
    steps.push(toolEnd("a", "web_search"), text(" end"));
    await renderSteps(channel, ref, steps, FULL);
    const [message, ...others] = world.botMessages();
    expect(others).toEqual([]);
    const shown = message!.versions.map((v) => v.text);
    for (const v of shown) expect(v.length).toBeLessThanOrEqual(300);
    expect(shown).toContain(`${long}\n\n⏳ _Searching the web…_`);
    expect(
      shown.some((v) => v.includes("web_search")),
      JSON.stringify(shown),
    ).toBe(false);
    // The tool's own words make even the compact line too long: the text alone shows.
    expect(shown.some((v) => v.includes("ppp"))).toBe(false);
    expect(shown).toContain(long);
    expect(message!.text).toMatch(/^x{236} end\n\n_1 tool, 0\.\d s_$/);
  });

  it("posts the view alone when a tool runs before any text, then the text takes the message over", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const steps: Step[] = [toolStart("a", "web_search", { query: "x" }), VIEW_ONLY_AFTER_MS + 300, toolEnd("a", "web_search")];
    steps.push(text("Found it."));
    const outcome = await renderSteps(channel, ref, steps, { mode: "compact", summary: false, show_reasoning: false });
    const [message, ...others] = world.botMessages();
    expect(others).toEqual([]);
    expect(message!.versions[0]!.text).toBe("⏳ _Searching the web…_");
    expect(message!.text).toBe("Found it.");
    expect(outcome.messages.map((m) => m.id)).toEqual([message!.id]);
  });

  it("a reply that wrote nothing ends its view-only message as the summary, and counts no text message", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const steps: Step[] = [toolStart("a", "bash"), VIEW_ONLY_AFTER_MS + 200, toolEnd("a", "bash")];
    const outcome = await renderSteps(channel, ref, steps, { mode: "compact", summary: false, show_reasoning: false });
    const [message, ...others] = world.botMessages();
    expect(others).toEqual([]);
    expect(message!.versions[0]!.text).toBe("⏳ _Running a command…_");
    expect(message!.text).toMatch(/^_1 tool, \d+\.\d s_$/);
    expect(outcome).toEqual({ kind: "done", text: "", messages: [] });
  });

  it("quotes the reasoning's tail under the live text when show_reasoning is on, never in the final text", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const reasoning: Step[] = [
      { type: "reasoning", delta: "The user wants *pricing*; " },
      60,
      { type: "reasoning", delta: "check the docs." },
    ];
    const steps: Step[] = [text("Hmm."), ...reasoning, 100, text(" Prices are on the site.")];
    await renderSteps(channel, ref, steps, { mode: "compact", summary: true, show_reasoning: true });
    const message = world.botMessages()[0]!;
    expect(message.versions.map((v) => v.text)).toContain(
      "Hmm.\n\n⏳ _Thinking…_\n\n> 💭 The user wants \\*pricing\\*; check the docs.",
    );
    expect(message.text).toBe("Hmm. Prices are on the site.");
  });

  it("a quick tool before the text posts no message of its own", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const steps: Step[] = [toolStart("a", "bash"), 50, toolEnd("a", "bash"), 50, text("Done.")];
    await renderSteps(channel, ref, steps, { ...FULL, mode: "compact" });
    expect(world.botMessages().map((m) => m.versions[0]!.text)).toEqual(["Done."]);
    expect(world.botMessages()[0]!.text).toMatch(/^Done\.\n\n_1 tool, 0\.\d s_$/);
  });
});

describe("renderRun: a channel that shows the view itself", () => {
  it("gets content.progress on the live message and its final view on the last; no view lines in text", async () => {
    const { channel: inner, ref } = loopback({ minEditIntervalMs: 30 });
    const channel = new ViewChannel(inner);
    // Slow tools and no text before them: the message is posted for the view alone.
    const steps: Step[] = [...threeTools(VIEW_ONLY_AFTER_MS / 2), ...words(6, 20)];
    await renderSteps(channel, ref, steps, FULL);

    const [first, ...rest] = channel.calls;
    expect(first).toMatchObject({ op: "send", text: "" });
    expect(first!.progress?.rows.map((r) => r.title)).toEqual(
      ["web_search", "fetch_url", "run_tests"].slice(0, first!.progress!.rows.length),
    );
    for (const call of channel.calls) {
      expect(call.text).not.toMatch(/[✓⏳]|tools?,/);
    }
    const final = rest.at(-1)!;
    expect(final.text).toBe(Array.from({ length: 6 }, (_, i) => `word${i} `).join(""));
    expect(final.progress).toMatchObject({ mode: "full", headline: "", summary: expect.stringMatching(/^3 tools, /) });
    expect(final.progress!.rows.map((r) => r.state)).toEqual(["done", "done", "done"]);
    expect(channel.calls.some((c) => c.progress?.rows.some((r) => r.state === "running"))).toBe(true);
  });
});

describe("renderRun: a native stream with progress()", () => {
  it("gets the view through progress(), paced with its updates, and a final one before finish", async () => {
    const interval = 40;
    const { world, channel, ref } = loopback({ minEditIntervalMs: interval, enforceEditInterval: true, nativeStream: {} });
    const calls = withStreamProgress(channel);
    const steps: Step[] = [text("Looking. "), ...threeTools(90), ...words(8, 15)];
    await renderSteps(channel, ref, steps, FULL);

    const message = world.botMessages()[0]!;
    expect(message.stream?.state).toBe("finished");
    expect(message.text).not.toMatch(/[✓⏳]|tools?,/);
    const progress = calls.filter((c) => c.op === "progress");
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress.some((c) => c.progress!.rows.some((r) => r.title === "run_tests" && r.state === "running"))).toBe(true);
    const last = calls.at(-1)!;
    const beforeLast = calls.at(-2)!;
    expect(last.op).toBe("finish");
    expect(beforeLast.op).toBe("progress");
    expect(beforeLast.progress).toMatchObject({ headline: "", summary: expect.stringMatching(/^3 tools, /) });
    for (const gap of gaps(calls.map((c) => c.at))) expect(gap).toBeGreaterThanOrEqual(interval - 1);
    expect(world.calls.filter((c) => c.op === "rejected")).toEqual([]);
  });

  it("a steady stream of text does not hold back the view: updates and views take turns", async () => {
    const interval = 40;
    const { channel, ref } = loopback({ minEditIntervalMs: interval, nativeStream: {} });
    const calls = withStreamProgress(channel);
    const steps: Step[] = [
      ...words(10, 10),
      toolStart("t", "web_search", { query: "x" }),
      ...words(40, 10),
      toolEnd("t", "web_search"),
    ];
    await renderSteps(channel, ref, steps, FULL);
    const firstView = calls.findIndex((c) => c.op === "progress");
    const updatesAfter = calls.slice(firstView).filter((c) => c.op === "update").length;
    expect(firstView).toBeGreaterThan(0);
    expect(updatesAfter, "text kept streaming after the view showed").toBeGreaterThanOrEqual(2);
    expect(calls[firstView]!.progress!.rows[0]).toMatchObject({ title: "web_search", state: "running" });
  });

  it("a stream without progress() shows nothing extra", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30, nativeStream: {} });
    const steps: Step[] = [text("Looking. "), ...threeTools(60), text("Done.")];
    await renderSteps(channel, ref, steps, FULL);
    const message = world.botMessages()[0]!;
    expect(message.versions.every((v) => "Looking. Done.".startsWith(v.text))).toBe(true);
    expect(message.text).toBe("Looking. Done.");
  });
});
