import { describe, expect, it } from "vitest";
import { decodeButtonValue, questionBlocks, sectionBlocks } from "../../src/channels/slack/buttons.js";
import { toMrkdwn } from "../../src/channels/slack/format.js";
import { stripMention } from "../../src/channels/slack/inbound.js";

describe("slack mrkdwn", () => {
  it("converts emphasis, links and code, escaping & < >", () => {
    expect(toMrkdwn("**bold**, *it*, ~~gone~~ and `a<b`")).toBe("*bold*, _it_, ~gone~ and `a&lt;b`");
    expect(toMrkdwn("see [the docs](https://example.com/x?a=1&b=2) & <tags>")).toBe(
      "see <https://example.com/x?a=1&b=2|the docs> &amp; &lt;tags&gt;",
    );
  });

  it("turns headings into bold lines and keeps lists and quotes", () => {
    expect(toMrkdwn("## Plan\n\n1. first\n2. second\n   - nested\n\n> quoted")).toBe(
      "*Plan*\n\n1. first\n2. second\n    • nested\n\n> quoted",
    );
  });

  it("keeps code blocks verbatim apart from escapes", () => {
    expect(toMrkdwn("```ts\nif (a < b && c) {}\n```")).toBe("```\nif (a &lt; b &amp;&amp; c) {}\n```");
  });

  it("links only schemes Slack links, and keeps a task's box after the bullet", () => {
    expect(toMrkdwn("[x](javascript:alert(1)) [m](mailto:a@b.c)")).toBe("x <mailto:a@b.c|m>");
    expect(toMrkdwn("- [ ] todo\n- [x] done")).toBe("• ☐ todo\n• ☑ done");
  });

  it("leaves plain text alone", () => {
    const text = "Antler streams this reply in small pieces. Each piece arrives later.";
    expect(toMrkdwn(text)).toBe(text);
  });
});

describe("slack blocks and inbound helpers", () => {
  it("splits long text into sections under Slack's 3,000 limit", () => {
    const long = Array.from({ length: 200 }, (_, i) => `line ${i} ${"x".repeat(30)}`).join("\n");
    const sections = sectionBlocks(long);
    expect(sections.length).toBeGreaterThan(1);
    for (const s of sections) expect((s.text as { text: string }).text.length).toBeLessThanOrEqual(3000);
    expect(sections.map((s) => (s.text as { text: string }).text).join("\n")).toBe(long);
  });

  it("gives each option its own action_id and a compact value", () => {
    const blocks = questionBlocks("Pick", "q1", [
      { id: "0", label: "Red" },
      { id: "1", label: "x".repeat(100) },
    ]);
    const actions = blocks.at(-1) as { elements: Array<{ action_id: string; value: string; text: { text: string } }> };
    expect(actions.elements.map((e) => e.action_id)).toEqual(["antler:0", "antler:1"]);
    expect(decodeButtonValue(actions.elements[0]?.value)).toEqual({ questionId: "q1", buttonId: "0" });
    expect(actions.elements[1]?.text.text.length).toBeLessThanOrEqual(75);
  });

  it("strips the bot mention and decodes Slack's escapes", () => {
    expect(stripMention("<@UBOT> is 1 &lt; 2 &amp;&amp; <@UOTHER> right?", "UBOT")).toBe("is 1 < 2 && <@UOTHER> right?");
    expect(stripMention("hey <@UBOT|antler>, help", "UBOT")).toBe("hey help");
  });
});
