/**
 * Long corpus replies streamed through the real renderer and each real adapter into its fake
 * platform, which refuses what the platform refuses (bad markup, text over its limit). Every
 * message must be accepted, the reply must stay exact, and a reader must see all of it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { measureFor } from "../../src/channels/markdown/index.js";
import { renderRun } from "../../src/core/render/index.js";
import type { RunEvent } from "../../src/harness/types.js";
import { silentLogger } from "../../src/log/logger.js";
import { longSamples, missingFromReply } from "../fixtures/markdown/corpus.js";
import { wires as allWires, type Wire } from "./wires.js";

/** Edits as often as each adapter allows, so the test does not wait on pacing. */
const wires = allWires({ edit_interval_ms: 150 });

async function* streamed(text: string): AsyncGenerator<RunEvent> {
  for (let i = 0; i < text.length; i += 400) {
    yield { type: "text", delta: text.slice(i, i + 400) };
    await new Promise((resolve) => setImmediate(resolve));
  }
  yield { type: "done", text };
}

// A table that grows past Telegram's limit once laid out, escapes that push Slack past 4,000,
// code cut across messages, and everything in the corpus at once.
const replies = longSamples().filter((s) => ["long-table", "escape-heavy", "long-code", "long-mixed"].includes(s.name));

let wire: Wire | undefined;
afterEach(async () => {
  await wire?.close();
  wire = undefined;
});

describe.each(Object.keys(wires))("%s: long corpus replies through the adapter to the fake", (platform) => {
  it("are accepted whole, exact, and fully visible", { timeout: 60_000 }, async () => {
    wire = await wires[platform]!();
    for (const reply of replies) {
      const before = wire.shown().length;
      const errors: unknown[] = [];
      const outcome = await renderRun(streamed(reply.markdown), {
        channel: wire.channel,
        ref: wire.ref,
        logger: silentLogger(),
        questionId: "q",
        hooks: { onError: (err) => errors.push(err) },
      });
      expect(errors, reply.name).toEqual([]);
      expect(outcome).toMatchObject({ kind: "done", text: reply.markdown });
      // Too long for one message once converted: it was split (the fake refuses a message over the limit).
      const { maxTextLength, markdown } = wire.channel.capabilities;
      if (measureFor(markdown)!(reply.markdown) > maxTextLength) expect(outcome.messages.length, reply.name).toBeGreaterThan(1);
      expect(missingFromReply(reply.markdown, wire.shown().slice(before).join("\n")), reply.name).toEqual([]);
    }
  });
});
