import { describe, expect, it } from "vitest";
import { fenceAtEnd } from "../../src/core/render/fence.js";
import { renderRun } from "../../src/core/render/index.js";
import { silentLogger } from "../../src/log/logger.js";
import { deltas, hookLog, loopback, render, Script, SlowChannel, sleep } from "./helpers.js";

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i} `);

/** The newest text the run had yielded before `at` (same-millisecond ties allow the one before). */
function newestBefore(script: Script, at: number): string[] {
  const before = script.snapshots.filter((s) => s.at <= at);
  const strictlyBefore = script.snapshots.filter((s) => s.at < at);
  return [before.at(-1)?.text, strictlyBefore.at(-1)?.text].filter((t): t is string => t !== undefined);
}

describe("renderRun: post, then paced edits", () => {
  it("posts at once, edits no faster than the interval, and stays within the edit bound", async () => {
    const interval = 100;
    const { world, channel, ref } = loopback({ minEditIntervalMs: interval, enforceEditInterval: true });
    const script = new Script(words(60), { gapMs: 10 });
    const hooks = hookLog();
    const outcome = await render(channel, ref, script, hooks.hooks);

    const [message, ...others] = world.botMessages();
    expect(others).toEqual([]);
    expect(message!.text).toBe(script.text);
    expect(outcome).toMatchObject({ kind: "done", text: script.text, messages: [{ id: message!.id }] });
    const versions = message!.versions;
    expect(versions[0]!.at - script.snapshots[0]!.at).toBeLessThan(interval);
    for (let i = 1; i < versions.length; i++) expect(versions[i]!.at - versions[i - 1]!.at).toBeGreaterThanOrEqual(interval);
    const edits = versions.length - 1;
    const duration = versions.at(-1)!.at - script.startedAt;
    expect(edits).toBeGreaterThanOrEqual(3);
    expect(edits).toBeLessThanOrEqual(duration / interval + 2);
    expect(world.calls.filter((c) => c.op === "rejected")).toEqual([]);
    expect(hooks.outbound.filter((k) => k === "send")).toHaveLength(1);
    expect(hooks.outbound.filter((k) => k === "edit")).toHaveLength(edits);
  });

  it("sends only the newest text, with one call in flight on a slow platform", async () => {
    const { world, channel: inner, ref } = loopback({ minEditIntervalMs: 50 });
    const channel = new SlowChannel(inner, 120);
    const script = new Script(words(50), { gapMs: 8 });
    await render(channel, ref, script);

    expect(channel.maxInFlight).toBe(1);
    const versions = world.botMessages()[0]!.versions;
    expect(versions.length).toBeLessThan(script.snapshots.length / 3);
    for (const v of versions) expect(newestBefore(script, v.at)).toContain(v.text);
    expect(versions.at(-1)!.text).toBe(script.text);
  });

  it("repairs markup in intermediate texts and ends with the model's exact text", async () => {
    const text =
      "Here is **bold** and `code` and a [link](https://example.com/x).\n\n```ts\nconst x = 1;\nconst y = 2;\n```\n\n_Done_.";
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const script = new Script(deltas(text, 3), { gapMs: 12 });
    await render(channel, ref, script);

    const message = world.botMessages()[0]!;
    expect(message.text).toBe(text);
    const intermediate = message.versions.slice(0, -1);
    expect(intermediate.length).toBeGreaterThan(3);
    for (const v of intermediate) expect(fenceAtEnd(v.text)).toBeUndefined();
    // Some version was shown while the fence was still open in the model's text, closed by repair.
    expect(intermediate.some((v) => v.text.includes("```ts") && v.text.endsWith("```") && !v.text.includes("_Done"))).toBe(true);
  });

  it("shows typing until the first text, repeated every typing interval, then stops", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 50, typingIntervalMs: 60 });
    const script = new Script(["Hello", " there"], { firstDelayMs: 320, gapMs: 100 });
    const hooks = hookLog();
    await render(channel, ref, script, hooks.hooks);
    const firstShown = world.botMessages()[0]!.versions[0]!.at;

    // Timers only run late on a loaded machine, so: at least twice in the 320 ms before the
    // text, never more often than the interval, none after the text showed.
    const at = world.typing.map((t) => t.at);
    expect(at.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(55);
    for (const t of at) expect(t).toBeLessThanOrEqual(firstShown);
    expect(hooks.firstVisible).toHaveLength(1);
    const count = world.typing.length;
    await sleep(150);
    expect(world.typing.length).toBe(count);
  });

  it("without edits, posts the final text once and keeps typing until then", async () => {
    const { world, channel, ref } = loopback({ edits: false, minEditIntervalMs: 50, typingIntervalMs: 50 });
    const script = new Script(words(30), { gapMs: 10 });
    await render(channel, ref, script);

    const messages = world.botMessages();
    expect(messages).toHaveLength(1);
    expect(messages[0]!.versions).toHaveLength(1);
    expect(messages[0]!.text).toBe(script.text);
    expect(world.typing.length).toBeGreaterThanOrEqual(4);
    expect(world.calls.filter((c) => c.op === "edit")).toEqual([]);
  });

  it("posts nothing for a run that says nothing", async () => {
    const { world, channel, ref } = loopback();
    const outcome = await render(channel, ref, new Script([]));
    expect(outcome).toEqual({ kind: "done", text: "", messages: [] });
    expect(world.botMessages()).toEqual([]);
  });

  it("uses the done event's text when the backend streamed nothing", async () => {
    const { world, channel, ref } = loopback();
    const script = new Script([], { end: { type: "done", text: "All at once." } });
    const outcome = await render(channel, ref, script);
    expect(outcome).toMatchObject({ kind: "done", text: "All at once." });
    expect(world.botMessages().map((m) => m.text)).toEqual(["All at once."]);
  });

  it("shows the running tool's step under intermediate text only (progress compact, the default)", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 40 });
    async function* events() {
      yield { type: "text" as const, delta: "Let me look that up." };
      await sleep(60);
      yield { type: "tool_start" as const, id: "t1", name: "web_search", args: {} };
      await sleep(150);
      yield { type: "tool_end" as const, id: "t1", name: "web_search", output: "ok", error: false };
      yield { type: "text" as const, delta: " Found it." };
      yield { type: "done" as const, text: "" };
    }
    await renderRun(events(), { channel, ref, logger: silentLogger(), questionId: "q" });
    const message = world.botMessages()[0]!;
    expect(message.versions.some((v) => v.text === "Let me look that up.\n\n⏳ _Searching the web…_")).toBe(true);
    expect(message.text).toBe("Let me look that up. Found it.");
  });
});
