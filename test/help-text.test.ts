/** `/help` is worded for the chat it answers in: tapping buttons only where there are buttons. */
import { describe, expect, it } from "vitest";
import { helpText } from "../src/core/commands.js";

describe("/help", () => {
  it("tells a chat with buttons to tap them", () => {
    expect(helpText({ buttons: true })).toMatch(/tap a button/);
  });

  it("tells a chat without buttons, such as the terminal, to type the answer", () => {
    const text = helpText({ buttons: false });
    expect(text).not.toMatch(/tap/i);
    expect(text).toMatch(/type the option's number/);
    expect(text).toMatch(/type "approve" or "reject <reason>"/);
  });
});
