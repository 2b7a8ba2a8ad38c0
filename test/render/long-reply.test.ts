import { describe, expect, it } from "vitest";
import { joinMarkdownChunks } from "../../src/core/render/chunk.js";
import { fenceAtEnd } from "../../src/core/render/fence.js";
import { deltas, loopback, render, Script } from "./helpers.js";
import { sampleReply } from "./markdown-samples.js";

describe("renderRun: replies longer than one message", () => {
  it("streams a 20,000-character reply with code fences into chunks that join back exactly", async () => {
    const interval = 50;
    const { world, channel, ref } = loopback({ maxTextLength: 4096, minEditIntervalMs: interval, enforceEditInterval: true });
    const text = sampleReply(20_000, 11);
    const script = new Script(deltas(text, 120), { gapMs: 3 });
    const outcome = await render(channel, ref, script);

    const messages = world.botMessages();
    expect(messages.length).toBeGreaterThanOrEqual(5);
    expect(outcome.messages.map((m) => m.id)).toEqual(messages.map((m) => m.id));
    expect(world.calls.filter((c) => c.op === "rejected")).toEqual([]);
    for (const m of messages) {
      expect(m.text.length).toBeLessThanOrEqual(4096);
      expect(fenceAtEnd(m.text)).toBeUndefined();
      // Intermediate versions are repaired, so no version ever shows an open fence either.
      for (const v of m.versions) expect(fenceAtEnd(v.text)).toBeUndefined();
    }
    expect(joinMarkdownChunks(messages.map((m) => m.text))).toBe(text);
    // Earlier chunks are frozen: once the next message exists, they never change again.
    for (let i = 0; i + 1 < messages.length; i++) {
      const nextPosted = messages[i + 1]!.versions[0]!.at;
      expect(messages[i]!.versions.filter((v) => v.at > nextPosted)).toEqual([]);
    }
    const calls = world.calls.filter((c) => c.op === "edit" || c.op === "send");
    const duration = calls.at(-1)!.at - script.startedAt;
    expect(world.calls.filter((c) => c.op === "edit").length).toBeLessThanOrEqual(duration / interval + 2);
  });
});
