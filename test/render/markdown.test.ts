/**
 * The one Markdown renderer: the walk and its emitter contract, lengths measured on the
 * converted text, and splitting (with fence repair) where the converted text fits.
 */
import { describe, expect, it } from "vitest";
import {
  fitText,
  type ListItemInfo,
  type MarkdownEmitter,
  measureFor,
  plainEmitter,
  renderMarkdown,
} from "../../src/channels/markdown/index.js";
import { slackEmitter, toMrkdwn } from "../../src/channels/slack/format.js";
import type { Channel } from "../../src/channels/types.js";
import { joinMarkdownChunks, splitMarkdown } from "../../src/core/render/chunk.js";
import { fenceAtEnd } from "../../src/core/render/fence.js";
import { deltas, loopback, render, Script } from "./helpers.js";
import { sampleReply } from "./markdown-samples.js";

describe("renderMarkdown: the walk", () => {
  it("writes plain text for every hook an emitter leaves out", () => {
    const md = "# Head\n\n**b** [docs](https://d.io) `c`\n\n- a\n  1. x\n\n| h | i |\n|---|---|\n| 1 | 2 |";
    expect(renderMarkdown(md, { name: "bare" })).toBe(renderMarkdown(md, plainEmitter));
    expect(renderMarkdown(md, plainEmitter)).toBe("Head\n\nb docs (https://d.io) c\n\n• a\n  1. x\n\nh | i\n1 | 2");
  });

  it("calls hooks on the completed emitter, so defaults escape with the emitter's own text", () => {
    const shouting: MarkdownEmitter = { name: "shout", text: (t) => t.toUpperCase() };
    expect(renderMarkdown("see [docs](https://d.io) and `x`", shouting)).toBe("SEE DOCS (HTTPS://D.IO) AND X");
  });

  it("takes hooks from a class's prototype too, with its fields as `this`", () => {
    class Brackets implements MarkdownEmitter {
      readonly name = "brackets";
      constructor(private readonly open: string) {}
      strong(inner: string) {
        return `${this.open}${inner}]`;
      }
    }
    expect(renderMarkdown("a **b** c", new Brackets("["))).toBe("a [b] c");
  });

  it("numbers lists from their start, tells tasks and depth, and indents nested lines", () => {
    const seen: ListItemInfo[] = [];
    const spy: MarkdownEmitter = {
      name: "spy",
      listMarker(item) {
        seen.push(item);
        return plainEmitter.listMarker(item);
      },
    };
    const out = renderMarkdown("3. a\n4. [x] b\n   - [ ] c\n\n     more", spy);
    expect(seen).toEqual([
      { ordered: true, number: 3, task: false, checked: false, depth: 0 },
      { ordered: true, number: 4, task: true, checked: true, depth: 0 },
      { ordered: false, number: 1, task: true, checked: false, depth: 1 },
    ]);
    expect(out).toBe("3. a\n4. ☑ b\n  ☐ c\n    more");
  });

  it("keeps a loose item's blank lines only for emitters that ask", () => {
    const md = "1. one\n\n   second paragraph\n2. two";
    expect(renderMarkdown(md, plainEmitter)).toBe("1. one\n  second paragraph\n2. two");
    expect(renderMarkdown(md, { name: "md", looseItems: true, listIndent: () => "   " })).toBe(
      "1. one\n\n   second paragraph\n2. two",
    );
  });

  it("decodes character references unless the emitter keeps them; code stays literal", () => {
    const md = "AT&amp;T &lt;b&gt; &#169; &unknown; `&amp;`";
    expect(renderMarkdown(md, plainEmitter)).toBe("AT&T <b> © &unknown; &amp;");
    expect(renderMarkdown(md, { name: "keep", keepEntities: true })).toBe("AT&amp;T &lt;b&gt; © &unknown; &amp;");
    expect(toMrkdwn("AT&amp;T")).toBe("AT&amp;T");
  });

  it("hands tables over with rendered cells, plain cells, alignment and source", () => {
    let seen: unknown;
    const md = "| **a** | b |\n|:--|--:|\n| `1` | 2 |";
    renderMarkdown(md, {
      name: "t",
      strong: (i) => `*${i}*`,
      table(t) {
        seen = t;
        return "";
      },
    });
    expect(seen).toEqual({
      header: ["*a*", "b"],
      rows: [["1", "2"]],
      plain: { header: ["a", "b"], rows: [["1", "2"]] },
      align: ["left", "right"],
      raw: md,
    });
  });
});

describe("measureFor", () => {
  it("counts text sent as written by its Markdown, and converted text by the emitter", () => {
    expect(measureFor("commonmark")).toBeUndefined();
    expect(measureFor("plain")).toBeUndefined();
    expect(measureFor(slackEmitter)!("a < b & c")).toBe("a &lt; b &amp; c".length);
    const seen: Array<[string, string]> = [];
    const own: MarkdownEmitter = {
      name: "own",
      measure(out, md) {
        seen.push([out, md]);
        return 7;
      },
    };
    expect(measureFor(own)!("**x**")).toBe(7);
    expect(seen).toEqual([["x", "**x**"]]);
  });

  it("fitText keeps the tail and cuts the head where the converted text fits", () => {
    const measure = measureFor(slackEmitter);
    expect(fitText("short", 100, measure, "\n\n→ yes")).toBe("short\n\n→ yes");
    const cut = fitText("<".repeat(50), 40, measure, "!")!;
    expect(cut).toMatch(/^<+…!$/);
    expect(toMrkdwn(cut).length).toBeLessThanOrEqual(40);
    expect(toMrkdwn(`${cut.slice(0, -2)}<…!`).length).toBeGreaterThan(40);
    expect(fitText("abc", 3, measure, "too long a tail")).toBeUndefined();
    expect(fitText("😀😀😀", 4, undefined)).toBe("😀…");
  });
});

describe("splitMarkdown with a measure", () => {
  const doubling: MarkdownEmitter = { name: "double", text: (t) => t + t };
  const double = measureFor(doubling)!;

  function expectGood(text: string, chunks: string[], limit: number, measure: (md: string) => number) {
    for (const [i, chunk] of chunks.entries()) {
      expect(measure(chunk), `chunk ${i}`).toBeLessThanOrEqual(limit);
      if (i < chunks.length - 1) expect(fenceAtEnd(chunk), `chunk ${i} leaves a fence open`).toBeUndefined();
    }
    expect(joinMarkdownChunks(chunks)).toBe(text);
  }

  it("cuts where the converted text fits, closing and reopening code fences", () => {
    const text = `Intro line.\n\n\`\`\`ts title="a"\n${Array.from({ length: 40 }, (_, i) => `const v${i} = ${i};`).join("\n")}\n\`\`\`\nafter`;
    const chunks = splitMarkdown(text, 300, double);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.filter((c) => c.startsWith('```ts title="a"\n')).length).toBeGreaterThan(0);
    expectGood(text, chunks, 300, double);
    // Without the measure the same limit would let chunks through at twice the size.
    expect(splitMarkdown(text, 300).some((c) => double(c) > 300)).toBe(true);
  });

  it("lets Markdown run past the limit where conversion shrinks it, up to twice", () => {
    const text = Array.from({ length: 30 }, (_, i) => `[label ${i}](https://example.com/a/long/path/${i})`).join(" ");
    const labelsOnly: MarkdownEmitter = { name: "labels", link: ({ label }) => label };
    const labels = measureFor(labelsOnly)!;
    const chunks = splitMarkdown(text, 400, labels);
    expectGood(text, chunks, 400, labels);
    expect(Math.max(...chunks.map((c) => c.length))).toBeGreaterThan(400);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(800);
  });

  it("round-trips random replies with Slack's escapes at several limits", () => {
    const slack = measureFor(slackEmitter)!;
    for (let seed = 1; seed <= 8; seed++) {
      const text = sampleReply(3000, seed).replaceAll("agent", "a<b&c");
      for (const limit of [300, 1000]) expectGood(text, splitMarkdown(text, limit, slack), limit, slack);
    }
  });
});

describe("renderRun on a channel with an emitter", () => {
  it("keeps every version of every message within the limit once converted", async () => {
    const { world, channel: loop, ref } = loopback({ minEditIntervalMs: 20 });
    const limit = 600;
    const channel: Channel = Object.create(loop, {
      capabilities: { value: { ...loop.capabilities, markdown: slackEmitter, maxTextLength: limit } },
    });
    const text = sampleReply(5000, 5).replaceAll("the", "<&>");
    const outcome = await render(channel, ref, new Script(deltas(text, 40), { gapMs: 1 }));
    expect(outcome).toMatchObject({ kind: "done", text });
    const messages = world.botMessages();
    expect(messages.length).toBeGreaterThan(Math.ceil(text.length / limit));
    for (const m of messages) for (const v of m.versions) expect(toMrkdwn(v.text).length).toBeLessThanOrEqual(limit);
    expect(joinMarkdownChunks(messages.map((m) => m.text))).toBe(text);
  });
});
