/**
 * The progress view on Slack's native stream, through the real web client against the fake:
 * the current step as the thread's status line, `full` rows as task cards (`task_update` chunks
 * on chat.appendStream), the summary as a context line under the finished reply, and lines under
 * the text once the stream broke. The fake takes chunks as Slack does (never beside
 * `markdown_text`, known types and statuses only) and shows each task card by id.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConversationRef, NativeStream } from "../../src/channels/types.js";
import { PlatformRateLimitError } from "../../src/errors.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { type AdapterRig, adapterRig } from "../fakes/slack/rig.js";
import { type RunStep, threeToolRun } from "../helpers/progress-run.js";

let fake: FakeSlack;
let rig: AdapterRig;

beforeEach(async () => {
  fake = await FakeSlack.start({ mode: "socket" });
  rig = await adapterRig(fake);
  await rig.start();
});

afterEach(async () => {
  await rig?.stop();
  await fake?.close();
});

const threadRef = (thread: string): ConversationRef => ({
  channel: "slack",
  key: `slack:T0001:C0001:${thread}`,
  chatId: "C0001",
  threadId: thread,
  chatType: "group",
  extra: { team: "T0001", user: "U0001" },
});

/** As the core drives a stream: each step's view, then its text; the final view, then finish. */
async function play(stream: NativeStream, steps: RunStep[]): Promise<void> {
  for (const [i, step] of steps.entries()) {
    await stream.progress?.(step.progress);
    if (i < steps.length - 1 && step.text) await stream.update(step.text);
  }
  await stream.finish(steps.at(-1)?.text ?? "");
}

const shown = () => fake.botMessages("C0001").at(-1);

describe("slack progress on a native stream", () => {
  it("keeps text lines for edited replies: only the stream shows the view natively", async () => {
    expect(rig.channel.capabilities.progressView).toBeUndefined();
    const stream = await rig.channel.startStream(threadRef("4.1"));
    expect(typeof stream?.progress).toBe("function");
    await stream?.finish("ok");
  });

  it("shows full rows as task cards that end ✓ with their durations, and the summary under the reply", async () => {
    const stream = (await rig.channel.startStream(threadRef("4.2")))!;
    await play(stream, threeToolRun());
    const m = shown()!;
    expect(m.text).toBe("All three steps are done.\n✓ 3 tools, 43 s");
    expect(m.tasks?.map((t) => [t.id, t.title, t.status, t.history.join(">")])).toEqual([
      ["call_1", "web_search", "complete", "in_progress>complete"],
      ["call_2", "read_file", "complete", "in_progress>complete"],
      ["call_3", "run_tests", "complete", "in_progress>complete"],
    ]);
    // Each card's details and output were sent once: they read cleanly whatever Slack does with a repeat.
    expect(m.versions.at(-1)?.tasks).toEqual([
      '✓ web_search — "antler gateway" → 1.2 s',
      "✓ read_file — README.md → 0.3 s",
      "✓ run_tests — unit → 41 s",
    ]);
    const appends = fake.calls("chat.appendStream");
    expect(appends.every((a) => (a.chunks === undefined) !== (a.markdown_text === undefined))).toBe(true);
    // One chunk per change: a row is sent when it starts and when it ends, not again in between.
    const taskChunks = appends.flatMap((a) => (a.chunks as Array<{ id: string }> | undefined) ?? []);
    expect(taskChunks).toHaveLength(6);
    // The current step was the thread's status line, cleared at the end.
    expect(fake.api.statuses.filter((s) => s.threadTs === "4.2").map((s) => s.status)).toEqual([
      "Searching the web…",
      "Reading README.md…",
      "Running tests…",
      "",
    ]);
    expect(fake.calls("chat.stopStream").at(-1)?.blocks).toBeDefined();
  });

  it("marks a failed tool with an error card, and leaves no summary line when the summary is off", async () => {
    const stream = (await rig.channel.startStream(threadRef("4.3")))!;
    await play(stream, threeToolRun({ fail: true, summary: false }));
    const m = shown()!;
    expect(m.tasks?.at(-1)).toMatchObject({ id: "call_3", status: "error", output: "41 s" });
    expect(m.text).toBe("All three steps are done.");
    expect(fake.calls("chat.stopStream").at(-1)?.blocks).toBeUndefined();
  });

  it("shows compact as the status line alone; where Slack refuses it, as one task card", async () => {
    const stream = (await rig.channel.startStream(threadRef("4.4")))!;
    await play(stream, threeToolRun({ mode: "compact", reasoning: "kept off Slack" }));
    expect(shown()?.tasks).toBeUndefined();
    expect(fake.api.statuses.filter((s) => s.threadTs === "4.4").map((s) => s.status)).toContain("Running tests…");
    expect(JSON.stringify(fake.api.calls)).not.toContain("kept off Slack");

    const refused = (await rig.channel.startStream(threadRef("4.5")))!;
    fake.api.failNext("assistant.threads.setStatus", "invalid_thread_ts");
    await play(refused, threeToolRun({ mode: "compact" }));
    expect(shown()?.tasks?.map((t) => [t.title, t.status])).toEqual([["3 tools, 43 s", "complete"]]);
    expect(shown()?.tasks?.[0]?.history).toEqual(["in_progress", "complete"]);
    expect(fake.api.statuses.filter((s) => s.threadTs === "4.5")).toEqual([]);
  });

  it("gives a rate limit back to the core, and sends the same change again after", async () => {
    const stream = (await rig.channel.startStream(threadRef("4.6")))!;
    const [first, second] = threeToolRun();
    await stream.progress?.(first!.progress);
    fake.api.rateLimitNext("chat.appendStream", 1);
    await expect(stream.progress?.(second!.progress)).rejects.toBeInstanceOf(PlatformRateLimitError);
    await stream.progress?.(second!.progress);
    await stream.finish("done");
    expect(shown()?.tasks?.[0]).toMatchObject({ status: "complete", output: "1.2 s" });
  });

  it("writes the view as lines under the text once the stream broke", async () => {
    const stream = (await rig.channel.startStream(threadRef("4.7")))!;
    const steps = threeToolRun();
    await stream.progress?.(steps[0]!.progress);
    await stream.update("Part one.");
    fake.api.failNext("chat.appendStream", "streaming_state_conflict");
    await stream.update("Part one. Part two.");
    await stream.progress?.(steps[3]!.progress);
    expect(shown()?.text).toBe(
      'Part one. Part two.\n\n⏳ Reading README.md…\n\n✓ web_search · "antler gateway" · 1.2 s  \n✓ read_file · README.md · 0.3 s',
    );
    await stream.progress?.(steps.at(-1)!.progress);
    await stream.finish("The end.");
    expect(shown()?.text).toBe("The end.\n\n✓ 3 tools, 43 s");
  });
});

describe("the fake's streaming chunks", () => {
  it("refuses markdown_text beside chunks, unknown chunk types and task statuses", async () => {
    const stream = (await rig.channel.startStream(threadRef("5.1")))!;
    const web = (rig.channel as unknown as { web: import("@slack/web-api").WebClient }).web;
    const at = { channel: "C0001", ts: stream.handle.id };
    const task = { type: "task_update", id: "t1", title: "x", status: "complete" } as const;
    await expect(web.chat.appendStream({ ...at, markdown_text: "a", chunks: [task] })).rejects.toMatchObject({
      data: { error: "invalid_arguments" },
    });
    const badStatus = { ...task, status: "done" } as unknown as typeof task;
    await expect(web.chat.appendStream({ ...at, chunks: [badStatus] })).rejects.toMatchObject({
      data: { error: "invalid_arguments" },
    });
    const unknown = { type: "progress_bar", value: 1 } as unknown as typeof task;
    await expect(web.chat.appendStream({ ...at, chunks: [unknown] })).rejects.toMatchObject({
      data: { error: "invalid_arguments" },
    });
    await web.chat.appendStream({ ...at, chunks: [task] });
    expect(shown()?.tasks?.map((t) => t.id)).toEqual(["t1"]);
    await stream.finish("ok");
  });
});
