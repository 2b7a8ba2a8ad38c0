import { describe, expect, it } from "vitest";
import { closeQuestion, questionContent, renderRun, sendNotice } from "../../src/core/render/index.js";
import { ChannelError, PlatformRateLimitError } from "../../src/errors.js";
import type { Clarification, RunEvent } from "../../src/harness/types.js";
import { silentLogger } from "../../src/log/logger.js";
import { shownText } from "../fakes/loopback.js";
import { hookLog, loopback, render, Script } from "./helpers.js";

const ask = (options: string[]): RunEvent & Clarification => ({
  type: "clarification",
  interruptId: "int-1",
  question: "Which environment should I deploy to?",
  options,
});

describe("renderRun: questions", () => {
  it("closes the text so far, then posts the question with buttons", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const script = new Script(["Before I deploy, ", "one question."], { gapMs: 20, end: ask(["staging", "production", "both"]) });
    const outcome = await render(channel, ref, script);

    const [reply, question] = world.botMessages();
    expect(reply!.text).toBe("Before I deploy, one question.");
    expect(question!.text).toBe("Which environment should I deploy to?");
    expect(question!.buttons).toEqual([
      { id: "1", label: "staging" },
      { id: "2", label: "production" },
      { id: "3", label: "both" },
    ]);
    expect(question!.questionId).toBe("q1");
    expect(outcome).toEqual({
      kind: "clarification",
      clarification: {
        interruptId: "int-1",
        question: "Which environment should I deploy to?",
        options: ["staging", "production", "both"],
      },
      question: { id: question!.id, ref },
      messages: [{ id: reply!.id, ref }],
    });
  });

  it("falls back to a numbered list when there are more options than buttons", async () => {
    const { world, channel, ref } = loopback();
    const options = Array.from({ length: 12 }, (_, i) => `option ${i + 1}`);
    await render(channel, ref, new Script([], { end: ask(options) }));

    const [question] = world.botMessages();
    expect(question!.buttons).toEqual([]);
    expect(question!.text).toContain("1. option 1\n2. option 2");
    expect(question!.text).toContain("12. option 12");
    expect(question!.text).toMatch(/reply with a number/i);
  });

  it("uses a numbered list on a channel without buttons, and plain text for a free question", () => {
    const { channel: noButtons } = loopback({ buttons: false });
    const c: Clarification = { interruptId: "i", question: "Pick one", options: ["a", "b"], context: "I need a target." };
    const content = questionContent(noButtons, c, "q9");
    expect(content.buttons).toBeUndefined();
    expect(content.text).toBe(
      "Pick one\n\n_I need a target._\n\n1. a\n2. b\n\n_Reply with a number, or answer in your own words._",
    );
    const { channel } = loopback();
    expect(questionContent(channel, { interruptId: "i", question: "Why?", options: [] }, "q9")).toEqual({ text: "Why?" });
  });

  it("closeQuestion shows the answer and removes the buttons; repeating it is harmless", async () => {
    const { world, channel, ref } = loopback();
    const handle = await channel.send(ref, questionContent(channel, ask(["yes", "no"]), "q1"));
    await closeQuestion(channel, handle, "Which environment should I deploy to?", "yes");
    await closeQuestion(channel, handle, "Which environment should I deploy to?", "yes");

    const [question] = world.botMessages();
    expect(question!.text).toBe("Which environment should I deploy to?\n\n→ yes");
    expect(question!.buttons).toEqual([]);
    expect(question!.versions).toHaveLength(2);
  });
});

describe("renderRun: errors", () => {
  it("closes the text, then posts a short notice", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const script = new Script(["Working on it", "…"], {
      gapMs: 20,
      end: { type: "error", code: "model_timeout", message: "The model took too long to answer." },
    });
    const outcome = await render(channel, ref, script);

    expect(world.botMessages().map((m) => m.text)).toEqual(["Working on it…", "⚠️ The model took too long to answer."]);
    expect(outcome).toMatchObject({ kind: "error", code: "model_timeout", message: "The model took too long to answer." });
    expect(outcome.messages).toHaveLength(1);
  });

  it("reports a failing event stream as an internal error with a generic notice", async () => {
    const { world, channel, ref } = loopback();
    const hooks = hookLog();
    const script = new Script(["Partial"], { throwAtEnd: new Error("socket hang up at 10.0.0.3") });
    const outcome = await render(channel, ref, script, hooks.hooks);

    const texts = world.botMessages().map((m) => m.text);
    expect(texts[0]).toBe("Partial");
    expect(texts[1]).toMatch(/^⚠️ /);
    expect(texts[1]).not.toContain("10.0.0.3");
    expect(outcome).toMatchObject({ kind: "error", code: "internal", message: "socket hang up at 10.0.0.3" });
  });

  it("counts the notice as the first visible thing of a run that said nothing", async () => {
    const { channel, ref } = loopback();
    const hooks = hookLog();
    async function* events(): AsyncGenerator<RunEvent> {
      yield { type: "error", code: "x", message: "Nope." };
    }
    await renderRun(events(), { channel, ref, logger: silentLogger(), questionId: "q", hooks: hooks.hooks });
    expect(hooks.firstVisible).toHaveLength(1);
  });
});

describe("sendNotice", () => {
  it("splits a long notice under the limit and posts every part", async () => {
    const { world, channel, ref } = loopback({ maxTextLength: 100, minEditIntervalMs: 10 });
    const text = Array.from({ length: 12 }, (_, i) => `Line ${i} of the help text.`).join("\n");
    const handles = await sendNotice(channel, ref, text);

    const messages = world.botMessages();
    expect(messages.length).toBeGreaterThan(1);
    expect(handles.map((h) => h.id)).toEqual(messages.map((m) => m.id));
    for (const m of messages) expect(m.text.length).toBeLessThanOrEqual(100);
    // A notice is text: each line shows as written (the loopback world keeps the Markdown sent).
    expect(messages.map((m) => shownText(m.text)).join("\n")).toBe(text);
  });

  it("retries failed sends with backoff", async () => {
    const { world, channel, ref } = loopback();
    world.failNext("send", 2, () => new ChannelError("loop", "platform_unavailable", "bad gateway"));
    const hooks = hookLog();
    await sendNotice(channel, ref, "I was restarted while answering this — please send it again.", hooks.hooks);
    expect(world.botMessages()).toHaveLength(1);
    expect(hooks.errors).toHaveLength(2);
  });

  it("waits out a 429 before calling again", async () => {
    const { world, channel, ref } = loopback();
    world.failNext("send", 1, () => new PlatformRateLimitError("loop", 200));
    const hooks = hookLog();
    await sendNotice(channel, ref, "Busy — your message is queued.", hooks.hooks);
    const [rejected, sent] = world.calls;
    expect(rejected!.op).toBe("rejected");
    expect(sent!.op).toBe("send");
    expect(sent!.at - rejected!.at).toBeGreaterThanOrEqual(200);
    expect(hooks.rateLimited).toEqual([200]);
  });
});
