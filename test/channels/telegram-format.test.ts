import { describe, expect, it } from "vitest";
import { decodeCallbackData, encodeCallbackData } from "../../src/channels/telegram/callback-data.js";
import { toPlainText, toTelegramHtml } from "../../src/channels/telegram/format.js";
import { stripMentions } from "../../src/channels/telegram/inbound.js";
import { parseHtml } from "../fakes/telegram/html.js";

const SAMPLES = [
  "# Title\n\nSome **bold**, *italic*, ~~gone~~ and `x < y && z`.",
  "A [link](https://example.com/?a=1&b=2) and <b>raw html</b> and 5 > 3.",
  "```ts\nconst a = b < c ? '<tag>' : \"&amp;\";\n```",
  "- one\n- two\n  1. nested\n  2. more\n\n> quoted **text**\n\n---\n\n| a | b |\n|---|---|\n| <1> | &2 |",
  "Streaming stops mid-way: **bold without end and ```js\nlet x = 1",
  "Unsafe [link](javascript:alert(1)) and ![img](https://e.x/p.png)",
  "- [ ] task\n- [x] done",
];

describe("telegram format", () => {
  it("produces HTML Telegram accepts for every sample, and the same visible text as plain mode", () => {
    for (const md of SAMPLES) {
      const html = toTelegramHtml(md);
      const parsed = parseHtml(html); // throws on markup Telegram would reject
      expect(parsed.text.length).toBeGreaterThan(0);
      expect(parsed.text.length).toBeLessThanOrEqual(md.length + 8);
    }
  });

  it("maps Markdown to Telegram's tags", () => {
    expect(toTelegramHtml("**b** *i* ~~s~~ `c`")).toBe("<b>b</b> <i>i</i> <s>s</s> <code>c</code>");
    expect(toTelegramHtml("# Head")).toBe("<b>Head</b>");
    expect(toTelegramHtml("```py\nprint(1<2)\n```")).toBe('<pre><code class="language-py">print(1&lt;2)</code></pre>');
    expect(toTelegramHtml("[x](https://a.b/?q=1&r=2)")).toBe('<a href="https://a.b/?q=1&amp;r=2">x</a>');
    expect(toTelegramHtml("[x](javascript:alert(1))")).toBe("x");
    expect(toTelegramHtml("a <script> & b")).toBe("a &lt;script&gt; &amp; b");
    expect(toTelegramHtml("- a\n- b")).toBe("• a\n• b");
    expect(toTelegramHtml("3. c\n4. d")).toBe("3. c\n4. d");
    expect(toTelegramHtml("> hi")).toBe("<blockquote>hi</blockquote>");
  });

  it("plain text drops the markup and keeps link targets", () => {
    expect(toPlainText("**Bold** and [docs](https://d.io)")).toBe("Bold and docs (https://d.io)");
    expect(toPlainText("```\na < b\n```")).toBe("a < b");
  });

  it("encodes callback data compactly and decodes any ids back", () => {
    for (const [q, b] of [
      ["q1", "0"],
      ["a.b:c", "x:y.z"],
      ["", "only"],
      ["ключ", "кн"],
    ] as const) {
      const data = encodeCallbackData(q, b);
      expect(decodeCallbackData(data)).toEqual({ questionId: q, buttonId: b });
    }
    expect(encodeCallbackData("3f9a2c1e", "1")).toBe("8.3f9a2c1e1");
    expect(decodeCallbackData("garbage")).toBeUndefined();
    expect(decodeCallbackData("z.short")).toBeUndefined();
  });

  it("strips mentions by UTF-16 offsets even after emoji", () => {
    const bot = { id: 1, username: "Antler_Bot" };
    const text = "😀 @antler_bot hello";
    const r = stripMentions(text, [{ type: "mention", offset: 3, length: 11 }], bot);
    expect(r).toEqual({ text: "😀 hello", mentioned: true });
    const other = stripMentions("@someone hi", [{ type: "mention", offset: 0, length: 8 }], bot);
    expect(other).toEqual({ text: "@someone hi", mentioned: false });
    const byId = stripMentions(
      "Antler do it",
      [{ type: "text_mention", offset: 0, length: 6, user: { id: 1, is_bot: true } }],
      bot,
    );
    expect(byId).toEqual({ text: "do it", mentioned: true });
  });
});
