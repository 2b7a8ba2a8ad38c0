import { describe, expect, it } from "vitest";
import { markdownTitle, toDingTalkMarkdown } from "../../src/channels/dingtalk/format.js";
import { robotMessageToInbound } from "../../src/channels/dingtalk/inbound.js";
import { callbackSignature, signatureProblem } from "../../src/channels/dingtalk/webhook-check.js";

describe("dingtalk markdown subset", () => {
  it("keeps what DingTalk renders", () => {
    const md =
      "# Title\n\nSome **bold**, *italic* and a [link](https://example.com).\n\n> quoted\n\n- one\n- two\n  - nested\n\n1. first\n2. second";
    expect(toDingTalkMarkdown(md)).toBe(
      "# Title\n\nSome **bold**, *italic* and a [link](https://example.com).\n\n> quoted\n\n- one\n- two\n    - nested\n\n1. first\n2. second",
    );
  });

  it("degrades code fences to quoted lines that keep their indentation", () => {
    const out = toDingTalkMarkdown("```py\ndef f():\n    return 1\n```");
    expect(out).toBe("> py:  \n> def f():  \n> \u00a0\u00a0\u00a0\u00a0return 1");
    expect(out).not.toContain("```");
  });

  it("degrades tables to one line per row with the header names", () => {
    const out = toDingTalkMarkdown("| city | temp |\n|---|---|\n| Hangzhou | 21 |\n| Beijing | 12 |");
    expect(out).toBe("city: Hangzhou, temp: 21  \ncity: Beijing, temp: 12");
  });

  it("drops marks DingTalk cannot show, keeping their text", () => {
    expect(toDingTalkMarkdown("run `npm test` ~~now~~ later")).toBe("run npm test now later");
  });

  it("keeps escapes escaped and Markdown inside code inert", () => {
    expect(toDingTalkMarkdown("\\[not a link\\](x)")).toBe("\\[not a link\\](x)");
    expect(toDingTalkMarkdown("```py\n# comment\n- x\n1. y\n```")).toBe("> py:  \n> \\# comment  \n> \\- x  \n> 1\\. y");
  });

  it("builds a short plain title", () => {
    expect(markdownTitle("## **Weather** today\n\nsunny")).toBe("Weather today");
    expect(markdownTitle("x".repeat(40))).toHaveLength(24);
    expect(markdownTitle("")).toBe("reply");
    expect(markdownTitle("> - quoted item")).toBe("quoted item");
    expect(markdownTitle(`${"x".repeat(22)}😀 more`)).toBe(`${"x".repeat(22)}…`);
  });
});

describe("dingtalk inbound helpers", () => {
  const base = {
    conversationId: "cid-1",
    conversationType: "2",
    msgId: "m1",
    senderId: "$:LWCP_v1:$x",
    senderNick: "X",
    chatbotUserId: "$:LWCP_v1:$bot",
    chatbotCorpId: "corp",
  };

  it("reads rich text and falls back to the opaque sender id without a staff id", () => {
    const msg = robotMessageToInbound("dt", "user", {
      ...base,
      msgtype: "richText",
      content: { richText: [{ text: " look " }, {}, { text: "here" }] },
    });
    expect(msg).toMatchObject({ text: "look here", user: { id: "$:LWCP_v1:$x" }, ref: { key: "dt:corp:cid-1:$:LWCP_v1:$x" } });
  });

  it("passes message types without text on with empty text, so the core can say it reads only text", () => {
    const msg = robotMessageToInbound("dt", "user", { ...base, msgtype: "picture" });
    expect(msg).toMatchObject({ eventId: "m1", text: "", mentioned: true, ref: { key: "dt:corp:cid-1:$:LWCP_v1:$x" } });
    expect(msg?.action).toBeUndefined();
  });

  it("checks the HTTP callback signature within one hour", () => {
    const now = 1_700_000_000_000;
    const ts = String(now - 30 * 60_000);
    expect(signatureProblem("s3cret", ts, callbackSignature("s3cret", ts), now)).toBeUndefined();
    expect(signatureProblem("s3cret", ts, callbackSignature("other", ts), now)).toBe("bad signature");
    const old = String(now - 61 * 60_000);
    expect(signatureProblem("s3cret", old, callbackSignature("s3cret", old), now)).toMatch(/window/);
    expect(signatureProblem("s3cret", undefined, "x", now)).toMatch(/missing/);
  });
});
