import { describe, expect, it } from "vitest";
import { joinMarkdownChunks } from "../../src/core/render/chunk.js";
import { ChannelError } from "../../src/errors.js";
import { deltas, hookLog, loopback, render, Script } from "./helpers.js";
import { sampleReply } from "./markdown-samples.js";

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i} `);
const broken = () => new ChannelError("loop", "platform_unavailable", "stream backend failed");

describe("renderRun: native streams", () => {
  it("streams with paced updates and finishes with the exact text", async () => {
    const interval = 60;
    const { world, channel, ref } = loopback({ minEditIntervalMs: interval, enforceEditInterval: true, nativeStream: {} });
    const hooks = hookLog();
    const script = new Script(words(40), { gapMs: 10 });
    const outcome = await render(channel, ref, script, hooks.hooks);

    const [message, ...others] = world.botMessages();
    expect(others).toEqual([]);
    expect(message!.stream?.state).toBe("finished");
    expect(message!.text).toBe(script.text);
    expect(outcome.messages.map((m) => m.id)).toEqual([message!.id]);
    const versions = message!.versions;
    expect(versions.length).toBeGreaterThan(3);
    for (const v of versions) expect(script.text.startsWith(v.text)).toBe(true);
    for (let i = 1; i < versions.length; i++) expect(versions[i]!.at - versions[i - 1]!.at).toBeGreaterThanOrEqual(interval);
    expect(world.calls.filter((c) => c.op === "edit" || c.op === "send" || c.op === "rejected")).toEqual([]);
    expect(hooks.outbound.every((k) => k === "stream")).toBe(true);
  });

  it("rotates to a new stream before the length limit", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 20, nativeStream: { maxTextLength: 300 } });
    const text = sampleReply(1200, 3);
    const script = new Script(deltas(text, 25), { gapMs: 4 });
    await render(channel, ref, script);

    const messages = world.botMessages();
    expect(messages.length).toBeGreaterThanOrEqual(4);
    expect(messages.filter((m) => m.stream).length).toBeGreaterThanOrEqual(2);
    for (const m of messages) {
      // A chunk completed before its stream could open is simply posted.
      expect(m.stream?.state ?? "finished").toBe("finished");
      expect(m.text.length).toBeLessThanOrEqual(300);
    }
    expect(joinMarkdownChunks(messages.map((m) => m.text))).toBe(text);
  });

  it("rotates to a new stream before the stream expires", async () => {
    // Long enough that the rotation's margin (a fifth of it) outlasts a late timer on a loaded machine.
    const maxDurationMs = 2_500;
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30, nativeStream: { maxDurationMs } });
    const script = new Script(words(100), { gapMs: 35 });
    await render(channel, ref, script);

    const messages = world.botMessages();
    expect(messages.length).toBeGreaterThanOrEqual(2);
    for (const m of messages) expect(m.versions.at(-1)!.at - m.stream!.startedAt).toBeLessThanOrEqual(maxDurationMs);
    for (const m of messages) expect(m.stream?.state).toBe("finished");
    expect(messages.map((m) => m.text).join("")).toBe(script.text);
  });

  it("falls back to editing the stream's message when the stream fails mid-way", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30, nativeStream: {} });
    const script = new Script(words(40), { gapMs: 10 });
    setTimeout(() => world.failNext("stream", 1, broken), 150);
    await render(channel, ref, script);

    const messages = world.botMessages();
    expect(messages).toHaveLength(1);
    expect(messages[0]!.stream?.state).toBe("aborted");
    expect(messages[0]!.text).toBe(script.text);
    expect(world.calls.filter((c) => c.op === "edit").length).toBeGreaterThanOrEqual(1);
  });

  it("posts new messages when the stream fails and its message cannot be edited either", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30, nativeStream: {} });
    const script = new Script(words(40), { gapMs: 10 });
    setTimeout(() => {
      world.failNext("stream", 1, broken);
      world.failNext("edit", 1, broken);
    }, 150);
    await render(channel, ref, script);

    const messages = world.botMessages();
    expect(messages).toHaveLength(2);
    expect(messages[0]!.stream?.state).toBe("aborted");
    expect(messages[1]!.stream).toBeUndefined();
    expect(messages[1]!.text).toBe(script.text);
  });

  it("delivers the final text when finishing the stream fails", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30, nativeStream: {} });
    const script = new Script(words(10), { gapMs: 10, beforeEnd: () => world.failNext("stream", 5, broken) });
    await render(channel, ref, script);
    const messages = world.botMessages();
    expect(messages.at(-1)!.text).toBe(script.text);
    expect(messages[0]!.stream?.state).toBe("aborted");
  });
});
