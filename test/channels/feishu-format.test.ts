import { describe, expect, it } from "vitest";
import { toCardMarkdown, toPlainText } from "../../src/channels/feishu/format.js";
import { messageText, replaceMentions } from "../../src/channels/feishu/inbound.js";

describe("feishu card markdown", () => {
  it("keeps what cards render", () => {
    const md = "# Title\n\n**bold** *it* ~~gone~~ `code` [link](https://x.y)\n\n- a\n- b\n  1. nested\n\n> quoted";
    expect(toCardMarkdown(md)).toBe(
      "# Title\n\n**bold** *it* ~~gone~~ `code` [link](https://x.y)\n\n- a\n- b\n  1. nested\n\n> quoted",
    );
  });

  it("keeps code blocks whole, with their language", () => {
    expect(toCardMarkdown("```ts\nconst a = 1 < 2;\n```")).toBe("```ts\nconst a = 1 < 2;\n```");
  });

  it("escapes angle brackets outside code, so they are not taken for card tags", () => {
    expect(toCardMarkdown("a <b>bold</b> <at id=all></at>")).toBe("a &lt;b&gt;bold&lt;/b&gt; &lt;at id=all&gt;&lt;/at&gt;");
  });

  it("turns external images into links and keeps tables", () => {
    expect(toCardMarkdown("![chart](https://x.y/c.png)")).toBe("[chart](https://x.y/c.png)");
    expect(toCardMarkdown("| a | b |\n|---|---|\n| 1 | 2 |")).toBe("| a | b |\n| --- | --- |\n| 1 | 2 |");
  });

  it("fences code with more backticks than it holds", () => {
    expect(toCardMarkdown("````md\n```js\nx\n```\n````")).toBe("````md\n```js\nx\n```\n````");
    expect(toCardMarkdown("`` a`b ``")).toBe("``a`b``");
  });

  it("keeps backslash escapes", () => {
    expect(toCardMarkdown("2 \\* 3")).toBe("2 \\* 3");
  });
});

describe("feishu plain text", () => {
  it("drops markup but keeps structure and link targets", () => {
    expect(toPlainText("**Hi** [docs](https://d.e)\n\n- one\n- two\n\n```\ncode\n```")).toBe(
      "Hi docs (https://d.e)\n\n• one\n• two\n\ncode",
    );
  });
});

describe("feishu message content", () => {
  it("reads text and post content, including locale-wrapped posts", () => {
    expect(messageText("text", JSON.stringify({ text: "hi" }))).toBe("hi");
    const post = {
      title: "T",
      content: [
        [
          { tag: "text", text: "a " },
          { tag: "a", text: "site", href: "https://s" },
        ],
        [{ tag: "text", text: "b" }],
      ],
    };
    expect(messageText("post", JSON.stringify(post))).toBe("T\na site (https://s)\nb");
    expect(messageText("post", JSON.stringify({ en_us: post }))).toBe("T\na site (https://s)\nb");
    expect(messageText("image", JSON.stringify({ image_key: "k" }))).toBeUndefined();
    expect(messageText("text", "not json")).toBeUndefined();
  });

  it("removes only the bot's mention and names the others", () => {
    const mentions = [
      { key: "@_user_1", id: { open_id: "ou_bot" }, name: "Bot" },
      { key: "@_user_10", id: { open_id: "ou_x" }, name: "Xia" },
    ];
    expect(replaceMentions("@_user_1 ask @_user_10 now", mentions, "ou_bot")).toBe("ask @Xia now");
  });
});
