/**
 * The progress view on Feishu: a section of the reply card under the text, through the real SDK
 * against the fake. On sent cards it is part of the card JSON (PATCH); on a CardKit stream it is
 * added, replaced and removed through the element APIs, with the card's sequence and rate kept.
 * The fake reads the card as a person would: the body text apart, the section as `notes` (a
 * collapsible panel shows its header, and its content only while expanded).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ConversationRef, NativeStream } from "../../src/channels/types.js";
import { type CardElement, markdownToVisible } from "../fakes/feishu/model.js";
import { type Rig, startRig } from "../fakes/feishu/rig.js";
import { type RunStep, threeToolRun } from "../helpers/progress-run.js";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function dmRef(r: Rig): Promise<ConversationRef> {
  await r.fake.userSays({ text: "hi" });
  return r.inbox.at(-1)?.ref as ConversationRef;
}

/** What the section's panel holds, read as a person who opens it would. */
function panelContent(r: Rig, messageId: string): string[] {
  const msg = r.fake.world.message(messageId);
  const card = msg?.cardId ? r.fake.world.cards.get(msg.cardId)?.card : msg?.card;
  const section = (card?.body?.elements ?? []).find((e) => e.tag === "collapsible_panel") as CardElement | undefined;
  return (section?.elements ?? [])
    .filter((e) => e.tag === "markdown")
    .flatMap((e) => markdownToVisible(String(e.content)).split("\n"));
}

/** Sends the first step as a card, PATCHes the rest (under 5 per second per message). */
async function playCards(r: Rig, ref: ConversationRef, steps: RunStep[]): Promise<string> {
  const [first, ...rest] = steps;
  if (!first) throw new Error("no steps");
  const handle = await r.channel.send(ref, { text: first.text || "Working…", progress: first.progress });
  for (const step of rest) {
    await sleep(220);
    await r.channel.edit(handle, { text: step.text, progress: step.progress });
  }
  return handle.id;
}

/** Streams the steps as the core would: each step's view, then its text, 8 operations a second at most. */
async function playStream(stream: NativeStream, steps: RunStep[]): Promise<void> {
  for (const [i, step] of steps.entries()) {
    await stream.progress?.(step.progress);
    if (i < steps.length - 1 && step.text) await stream.update(step.text);
    await sleep(250);
  }
  await stream.finish(steps.at(-1)?.text ?? "");
}

describe("feishu progress section on sent cards", () => {
  it("says it shows the view itself", async () => {
    rig = await startRig({ noStart: true });
    expect(rig.channel.capabilities.progressView).toBe(true);
  });

  it("shows full as an open panel under the text while the run goes, folded to the summary at the end", async () => {
    rig = await startRig();
    const id = await playCards(rig, await dmRef(rig), threeToolRun());
    const msg = rig.fake.world.message(id);
    const notes = msg?.versions.map((v) => v.notes ?? []);
    expect(notes?.[0]).toEqual(["▾ ⏳ Searching the web…", '⏳ web_search · "antler gateway"']);
    expect(notes).toContainEqual([
      "▾ ⏳ Running tests…",
      '✓ web_search · "antler gateway" · 1.2 s',
      "✓ read_file · README.md · 0.3 s",
      "⏳ run_tests · unit",
    ]);
    expect(msg?.notes).toEqual(["▸ ✓ 3 tools, 43 s"]);
    expect(panelContent(rig, id)).toEqual([
      '✓ web_search · "antler gateway" · 1.2 s',
      "✓ read_file · README.md · 0.3 s",
      "✓ run_tests · unit · 41 s",
    ]);
    // The body is the reply alone, in every version.
    expect(msg?.text).toBe("All three steps are done.");
    expect(msg?.versions.every((v) => !v.text.includes("web_search"))).toBe(true);
    expect(rig.fake.world.rateLimited()).toEqual([]);
  });

  it("drops the section when the run ends without a summary; compact is one grey line", async () => {
    rig = await startRig();
    const ref = await dmRef(rig);
    const off = rig.fake.world.message(await playCards(rig, ref, threeToolRun({ summary: false })));
    expect(off?.versions.at(-2)?.notes?.length).toBe(4);
    expect(off?.notes).toEqual([]);
    const compactId = await playCards(rig, ref, threeToolRun({ mode: "compact" }));
    const compact = rig.fake.world.message(compactId);
    expect(compact?.versions.map((v) => v.notes)).toContainEqual(["⏳ Running tests…"]);
    expect(compact?.notes).toEqual(["✓ 3 tools, 43 s"]);
    const card = compact?.card?.body?.elements?.find((e) => e.element_id === "progress");
    expect(card).toMatchObject({ tag: "markdown", text_size: "notation" });
    expect(String(card?.content)).toContain("<font color='grey'>");
  });

  it("folds reasoning into its own closed panel, and writes the view as lines when the card is refused", async () => {
    rig = await startRig();
    const ref = await dmRef(rig);
    const [first] = threeToolRun({ reasoning: "Search, then read." });
    const handle = await rig.channel.send(ref, { text: "Working…", progress: first?.progress });
    expect(rig.fake.world.message(handle.id)?.notes).toEqual([
      "▾ ⏳ Searching the web…",
      '⏳ web_search · "antler gateway"',
      "▸ Reasoning",
    ]);
    rig.fake.failNext("reply", { status: 400, code: 230099, msg: "Failed to create card content" });
    const plain = await rig.channel.send(ref, { text: "Working…", progress: first?.progress });
    expect(rig.fake.world.message(plain.id)).toMatchObject({
      msgType: "text",
      text: 'Working…\n\n⏳ Searching the web…\n\n⏳ web_search · "antler gateway"',
    });
  });
});

describe("feishu progress section on a CardKit stream", () => {
  it("adds the section once, replaces it as the run goes, and keeps sequences and the card's rate", async () => {
    rig = await startRig();
    const stream = await rig.channel.startStream(await dmRef(rig));
    if (!stream) throw new Error("no stream");
    await playStream(stream, threeToolRun());
    const msg = rig.fake.world.message(stream.handle.id);
    const card = rig.fake.world.cards.get(msg?.cardId as string);
    const ops = rig.fake.world.calls.filter((c) => c.op.startsWith("element_")).map((c) => `${c.op}:${c.code}`);
    expect(ops[0]).toBe("element_create:0");
    expect(ops.slice(1).every((op) => op === "element_update:0")).toBe(true);
    expect(ops.length).toBe(7);
    const seqs = card?.sequences ?? [];
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
    expect(msg?.versions.map((v) => v.notes ?? [])).toContainEqual([
      "▾ ⏳ Reading README.md…",
      '✓ web_search · "antler gateway" · 1.2 s',
      "⏳ read_file · README.md",
    ]);
    expect(msg?.text).toBe("All three steps are done.");
    expect(msg?.notes).toEqual(["▸ ✓ 3 tools, 43 s"]);
    expect(panelContent(rig, stream.handle.id)).toHaveLength(3);
    expect(card?.card.config?.streaming_mode).toBe(false);
    expect(rig.fake.world.rateLimited()).toEqual([]);
  });

  it("removes the section at the end when the summary is off, and skips views that did not change", async () => {
    rig = await startRig();
    const stream = await rig.channel.startStream(await dmRef(rig));
    if (!stream) throw new Error("no stream");
    const steps = threeToolRun({ summary: false });
    await stream.progress?.(steps[0]?.progress as never);
    await stream.progress?.(steps[0]?.progress as never);
    await sleep(150);
    await playStream(stream, steps.slice(1));
    const ops = rig.fake.world.calls.filter((c) => c.op.startsWith("element_")).map((c) => c.op);
    expect(ops.filter((op) => op === "element_create")).toHaveLength(1);
    expect(ops.at(-1)).toBe("element_delete");
    const msg = rig.fake.world.message(stream.handle.id);
    expect(msg?.notes).toEqual([]);
    expect(msg?.text).toBe("All three steps are done.");
  });

  it("swaps a grey line for a panel when reasoning arrives (compact), removing it first", async () => {
    rig = await startRig();
    const stream = await rig.channel.startStream(await dmRef(rig));
    if (!stream) throw new Error("no stream");
    const line = threeToolRun({ mode: "compact" })[0]?.progress;
    const withReasoning = threeToolRun({ mode: "compact", reasoning: "Search first." })[0]?.progress;
    await stream.progress?.(line as never);
    expect(rig.fake.world.message(stream.handle.id)?.notes).toEqual(["⏳ Searching the web…"]);
    await stream.progress?.(withReasoning as never);
    const ops = rig.fake.world.calls.filter((c) => c.op.startsWith("element_")).map((c) => c.op);
    expect(ops).toEqual(["element_create", "element_delete", "element_create"]);
    expect(rig.fake.world.message(stream.handle.id)?.notes).toEqual(["▸ ⏳ Searching the web…"]);
    expect(panelContent(rig, stream.handle.id)).toEqual(["Search first."]);
    await stream.finish("Done.");
  });
});

describe("the fake's CardKit element checks", () => {
  it("refuses malformed element ids, duplicates and unknown elements, as Feishu does", async () => {
    rig = await startRig();
    const stream = await rig.channel.startStream(await dmRef(rig));
    const cardId = rig.fake.world.message(stream?.handle.id as string)?.cardId as string;
    const client = (rig.channel as unknown as { api: { client: import("@larksuiteoapi/node-sdk").Client } }).api.client;
    const add = (elements: unknown[], sequence: number) =>
      client.cardkit.v1.cardElement.create({
        path: { card_id: cardId },
        data: { type: "insert_after", target_element_id: "reply_md", elements: JSON.stringify(elements), sequence },
      });
    const bad = await add([{ tag: "markdown", element_id: "1st", content: "x" }], 10).catch((e) => e.response?.data);
    expect(bad).toMatchObject({ code: 300303 });
    const twice = await add([{ tag: "markdown", element_id: "reply_md", content: "x" }], 11).catch((e) => e.response?.data);
    expect(twice).toMatchObject({ code: 300303 });
    const missing = await client.cardkit.v1.cardElement
      .update({ path: { card_id: cardId, element_id: "nope" }, data: { element: "{}", sequence: 12 } })
      .catch((e) => e.response?.data);
    expect(missing).toMatchObject({ code: 300302 });
    const panel = { tag: "collapsible_panel", element_id: "p", elements: [] };
    const headless = await add([panel], 13).catch((e) => e.response?.data);
    expect(headless).toMatchObject({ code: 300303 });
    await stream?.finish("ok");
  });
});
