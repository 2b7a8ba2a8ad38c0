import { describe, expect, it } from "vitest";
import { repairMarkdown } from "../../src/core/render/repair.js";

describe("repairMarkdown", () => {
  it.each([
    ["closes an open fence", "Look:\n```py\nprint(1", "Look:\n```py\nprint(1\n```"],
    ["closes a fence after a newline without adding a blank line", "```\ncode\n", "```\ncode\n```"],
    ["closes a tilde fence with its own marker", "~~~~sh\nls", "~~~~sh\nls\n~~~~"],
    ["closes bold", "This is **very", "This is **very**"],
    ["closes italic and bold in reverse order", "x *it and **bo", "x *it and **bo***"],
    ["closes an underscore emphasis", "**done** and _it", "**done** and _it_"],
    ["closes strikethrough", "- item ~~gone", "- item ~~gone~~"],
    ["closes a code span, and emphasis around it", "ok `a` fine **x `y", "ok `a` fine **x `y`**"],
    ["closes emphasis before trailing space", "text **bold ", "text **bold**"],
    ["hides a marker with nothing after it", "Hello **", "Hello "],
    ["hides a just-opened code span", "Run `", "Run "],
    ["shows an unfinished link as its label", "see [the docs](https://exa", "see the docs"],
    ["leaves arithmetic alone", "2 * 3 = 6", "2 * 3 = 6"],
    ["leaves intraword underscores alone", "call snake_case_name now", "call snake_case_name now"],
    ["leaves a list bullet alone", "* first item", "* first item"],
    ["leaves complete markup alone", "**a** _b_ `c` [d](e) ~~f~~", "**a** _b_ `c` [d](e) ~~f~~"],
    ["only looks at the last line", "a **b\nc", "a **b\nc"],
    ["does not touch markup inside a closed code block", "```\n**x\n```", "```\n**x\n```"],
    ["keeps an empty text empty", "", ""],
  ])("%s", (_name, input, expected) => {
    expect(repairMarkdown(input)).toBe(expected);
  });

  it("is stable on text that needs no repair", () => {
    const text = "# Title\n\nSome **bold** text.\n\n```ts\nconst a = 1;\n```\n";
    expect(repairMarkdown(text)).toBe(text);
  });
});
