import { describe, expect, it } from "vitest";
import { joinMarkdownChunks, splitMarkdown } from "../../src/core/render/chunk.js";
import { fenceAtEnd } from "../../src/core/render/fence.js";
import { fragmentSoup, sampleReply } from "./markdown-samples.js";

function expectGoodChunks(text: string, chunks: string[], limit: number): void {
  for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(limit);
  const textLeavesFenceOpen = fenceAtEnd(text) !== undefined;
  chunks.forEach((chunk, i) => {
    if (i < chunks.length - 1 || !textLeavesFenceOpen)
      expect(fenceAtEnd(chunk), `chunk ${i} leaves a fence open`).toBeUndefined();
  });
  expect(joinMarkdownChunks(chunks)).toBe(text);
}

describe("splitMarkdown", () => {
  it("keeps a short text as one chunk", () => {
    expect(splitMarkdown("hello **world**", 100)).toEqual(["hello **world**"]);
    expect(splitMarkdown("", 100)).toEqual([""]);
  });

  it("acceptance: a 20,000-character reply with code fences", () => {
    const text = sampleReply(20_000, 7);
    expect(text.length).toBeGreaterThanOrEqual(20_000);
    expect(text.match(/^\s*```/gm)?.length ?? 0).toBeGreaterThan(4);
    const chunks = splitMarkdown(text, 4096);
    expect(chunks.length).toBeGreaterThanOrEqual(5);
    expectGoodChunks(text, chunks, 4096);
    // Chunks are well filled: boundaries are chosen, not every line.
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil(text.length / 2048) + 1);
  });

  it("prefers a paragraph break, then a line, a sentence, a word", () => {
    const para = `${"a".repeat(60)}\n\n${"b".repeat(30)}`;
    expect(splitMarkdown(para, 80)).toEqual([`${"a".repeat(60)}\n\n`, "b".repeat(30)]);
    const lines = `${"a".repeat(50)}\n${"b".repeat(20)} c\n${"d".repeat(20)}`;
    expect(splitMarkdown(lines, 80)[0]).toBe(`${"a".repeat(50)}\n${"b".repeat(20)} c\n`);
    const sentences = "One two three four five six. Seven eight nine ten eleven twelve";
    expect(splitMarkdown(sentences, 40)[0]).toBe("One two three four five six. ");
    const words = "word ".repeat(20).trim();
    expect(splitMarkdown(words, 22)[0]).toBe("word word word word ");
  });

  it("hard-cuts only when nothing else fits, and never splits a surrogate pair", () => {
    const text = "😀".repeat(30);
    const chunks = splitMarkdown(text, 11);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(11);
    for (const c of chunks) expect(c.length % 2).toBe(0);
    expect(chunks.join("")).toBe(text);
  });

  it("closes a cut fence and reopens it with the same info string", () => {
    const code = Array.from({ length: 12 }, (_, i) => `line ${i}`).join("\n");
    const text = `Intro\n\n\`\`\`ts title="a"\n${code}\n\`\`\`\nafter`;
    const chunks = splitMarkdown(text, 60);
    expect(chunks.length).toBeGreaterThan(1);
    const middle = chunks.filter((c) => c.startsWith('```ts title="a"\n') && c.endsWith("\n```"));
    expect(middle.length).toBeGreaterThan(0);
    expectGoodChunks(text, chunks, 60);
  });

  it("splits a code line longer than the limit and still joins exactly", () => {
    const text = `\`\`\`\n${"z".repeat(300)}\n\`\`\``;
    const chunks = splitMarkdown(text, 100);
    expectGoodChunks(text, chunks, 100);
  });

  it("keeps a fence the text leaves open as it is in the last chunk", () => {
    const text = `${"p ".repeat(40)}\n\n\`\`\`py\n${"print(1)\n".repeat(20)}`;
    expectGoodChunks(text, splitMarkdown(text, 70), 70);
  });

  it("does not take adjacent real fences for ones it added", () => {
    const block = (n: number) => `\`\`\`js\n${`x${n}\n`.repeat(8)}\`\`\``;
    const text = [block(1), block(2), block(3)].join("\n");
    for (const limit of [20, 25, 31, 40, 47, 64]) expectGoodChunks(text, splitMarkdown(text, limit), limit);
  });

  it("round-trips random replies at many limits", () => {
    for (let seed = 1; seed <= 25; seed++) {
      const text = sampleReply(3000, seed);
      for (const limit of [200, 333, 1000]) expectGoodChunks(text, splitMarkdown(text, limit), limit);
    }
  });

  it("round-trips markup soup at small limits", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const text = fragmentSoup(seed, 80);
      for (const limit of [40, 57, 90]) {
        const chunks = splitMarkdown(text, limit);
        for (const c of chunks) expect(c.length).toBeLessThanOrEqual(limit);
        expect(joinMarkdownChunks(chunks), `seed ${seed} limit ${limit}`).toBe(text);
      }
    }
  });

  it("rejects a limit that is not a positive integer", () => {
    expect(() => splitMarkdown("abc", 0)).toThrow(RangeError);
  });
});
