import { describe, expect, it } from "vitest";
import { decodeCallbackData, encodeCallbackData } from "../../src/channels/telegram/buttons.js";
import { telegramEmitter, toPlainText, toTelegramHtml } from "../../src/channels/telegram/format.js";
import { stripMentions } from "../../src/channels/telegram/inbound.js";

// Every sample of the shared corpus (test/fixtures/markdown) goes through Telegram's HTML parser
// in markdown-corpus.test.ts; these pin the exact tags.
describe("telegram format", () => {
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

  it("counts what Telegram counts: the text after entities, or the plain retry if that is longer", () => {
    expect(telegramEmitter.measure?.(toTelegramHtml("**a** &lt; b"), "**a** &lt; b")).toBe("a < b".length);
    const link = "[docs](https://example.com/a/long/path)";
    expect(telegramEmitter.measure?.(toTelegramHtml(link), link)).toBe("docs (https://example.com/a/long/path)".length);
    const table = "| a | b |\n|---|---|\n| 1 | 2 |";
    expect(telegramEmitter.measure?.(toTelegramHtml(table), table)).toBe("a | b\n1 | 2".length);
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
