/**
 * The progress view on DingTalk: AI card templates have no collapsible part, so the view is a
 * markdown variable of its own (`card_progress_key`) that the template places under the reply.
 * Without that key the channel does not claim the view (the core writes it into the text).
 * Driven through the adapter against the fake, whose cards show only the variables their
 * template places.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ConversationRef, NativeStream } from "../../src/channels/types.js";
import { type Rig, sleep, startRig, TEMPLATE, until } from "../fakes/dingtalk/rig.js";
import { type RunStep, threeToolRun } from "../helpers/progress-run.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const TEMPLATES = {
  templates: {
    [TEMPLATE]: { contentKey: "content", buttonsKey: "buttons", progressKey: "progress" },
    "tpl-plain.schema": { contentKey: "content" },
  },
};
const CARDS = { card_template_id: TEMPLATE, card_progress_key: "progress", edit_interval_ms: 50 };

async function refFrom(r: Rig, group?: string): Promise<ConversationRef> {
  const before = r.inbox.length;
  await r.fake.userSays("question", group ? { group } : {});
  await until(() => r.inbox.length > before, "the inbound message");
  return r.inbox.at(-1)!.ref;
}

async function playStream(stream: NativeStream, steps: RunStep[]): Promise<void> {
  for (const [i, step] of steps.entries()) {
    await stream.progress?.(step.progress);
    if (i < steps.length - 1 && step.text) await stream.update(step.text);
    await sleep(60);
  }
  await stream.finish(steps.at(-1)?.text ?? "");
}

describe("dingtalk progress variable", () => {
  it("claims the view only with a template variable for it", async () => {
    rig = await startRig(CARDS, TEMPLATES);
    expect(rig.channel.capabilities.progressView).toBe(true);
    await rig.close();
    rig = await startRig({ card_template_id: TEMPLATE }, TEMPLATES);
    expect(rig.channel.capabilities.progressView).toBe(false);
    const stream = await rig.channel.startStream(await refFrom(rig));
    expect(stream?.progress).toBeUndefined();
    await stream?.finish("ok");
  });

  it("streams the view into its variable beside the streamed text, and keeps the summary line at the end", async () => {
    rig = await startRig(CARDS, TEMPLATES);
    const stream = await rig.channel.startStream(await refFrom(rig));
    if (!stream?.progress) throw new Error("no progress on the stream");
    await playStream(stream, threeToolRun());
    const [card] = rig.fake.messagesIn(rig.fake.dmId());
    const notes = card?.versions.map((v) => v.notes ?? []);
    expect(notes).toContainEqual(["⏳ Searching the web…", '⏳ web_search · "antler gateway"']);
    expect(notes).toContainEqual([
      "⏳ Running tests…",
      '✓ web_search · "antler gateway" · 1.2 s',
      "✓ read_file · README.md · 0.3 s",
      "⏳ run_tests · unit",
    ]);
    expect(card?.notes).toEqual(["✓ 3 tools, 43 s"]);
    expect(card?.text).toBe("All three steps are done.");
    expect(card?.card?.flowStatus).toBe("3");
    // The text went through the streaming API, the view through data updates by key that leave the rest alone.
    const updates = rig.fake.calls.filter((c) => c.api === "card.update").map((c) => c.body as Record<string, unknown>);
    expect(updates).toHaveLength(7);
    for (const u of updates) {
      expect(u.cardUpdateOptions).toEqual({ updateCardDataByKey: true });
      expect(Object.keys((u.cardData as { cardParamMap: object }).cardParamMap)).toEqual(["progress"]);
    }
    const streamed = rig.fake.calls.filter((c) => c.api === "card.stream").map((c) => c.body as Record<string, unknown>);
    expect(streamed.every((b) => b.key === "content")).toBe(true);
  });

  it("clears the variable when the run ends without a summary; compact is the current step alone", async () => {
    rig = await startRig(CARDS, TEMPLATES);
    const ref = await refFrom(rig);
    const off = await rig.channel.startStream(ref);
    await playStream(off as NativeStream, threeToolRun({ summary: false }));
    const compact = await rig.channel.startStream(ref);
    await playStream(compact as NativeStream, threeToolRun({ mode: "compact", reasoning: "not shown here" }));
    const [first, second] = rig.fake.messagesIn(rig.fake.dmId());
    expect(first?.versions.findLast((v) => v.notes?.length)?.notes).toHaveLength(4);
    expect(first?.notes).toEqual([]);
    expect(second?.versions.map((v) => v.notes)).toContainEqual(["⏳ Running tests…"]);
    expect(second?.versions.every((v) => (v.notes ?? []).length <= 1)).toBe(true);
    expect(JSON.stringify(rig.fake.calls)).not.toContain("not shown here");
  });

  it("puts the view into sent and edited cards, and under the text of a plain markdown reply", async () => {
    rig = await startRig(CARDS, TEMPLATES);
    const ref = await refFrom(rig, "cid-group-1");
    const steps = threeToolRun();
    const handle = await rig.channel.send(ref, { text: "Working…", progress: steps[0]?.progress });
    await rig.channel.edit(handle, { text: "Done.", progress: steps.at(-1)?.progress });
    const [card] = rig.fake.messagesIn("cid-group-1");
    expect(card?.versions.map((v) => v.notes)).toEqual([
      ["⏳ Searching the web…", '⏳ web_search · "antler gateway"'],
      ["✓ 3 tools, 43 s"],
    ]);
    // A DM partner without a staff id has no card space: one markdown message, the view under the text.
    const noStaff = { ...ref, chatType: "direct" as const, extra: { ...ref.extra, staffId: "" } };
    await rig.channel.send(noStaff, { text: "Working…", progress: steps[1]?.progress });
    const markdown = rig.fake.messagesIn("cid-group-1").find((m) => m.kind === "markdown");
    expect(markdown?.text).toBe('Working…\n⏳ Searching the web…\n✓ web_search · "antler gateway" · 1.2 s');
  });

  it("shows nothing of a view written to a variable the template does not place", async () => {
    rig = await startRig({ ...CARDS, card_template_id: "tpl-plain.schema" }, TEMPLATES);
    const stream = await rig.channel.startStream(await refFrom(rig));
    await stream?.progress?.(threeToolRun()[0]!.progress);
    await stream?.finish("ok");
    const [card] = rig.fake.messagesIn(rig.fake.dmId());
    expect(card?.notes).toBeUndefined();
    expect(card?.text).toBe("ok");
  });
});
