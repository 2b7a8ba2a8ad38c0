/**
 * The media core beyond the contract: what is refused and how (types, missing transcription,
 * models without vision), safe names and folders, and the file tools' bounds. Through a whole
 * gateway with the loopback channel, and on the thread folders directly.
 */
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { FileOutbox, safeFileName, ThreadFiles } from "../src/harness/files.js";
import { fileTools } from "../src/harness/tools/files.js";
import { mimeOf, sniffImage } from "../src/media/desk.js";
import { PDF, PNG } from "../src/testing/contract/media.js";
import { eventually, startTestGateway, type TestGateway } from "./contract/gateway.js";
import { LoopbackWorld, shownText } from "./fakes/loopback.js";
import { lastUserImages, lastUserText } from "./fakes/openai.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

async function boot(media: Record<string, unknown> = {}, modelConfig: Record<string, unknown> = {}) {
  const world = new LoopbackWorld({ minEditIntervalMs: 20 });
  gw = await startTestGateway({ channels: { loop: world.channelConfig() }, sections: { media }, modelConfig });
  return { world, gw };
}

const texts = (world: LoopbackWorld) => world.botMessages().map((m) => shownText(m.text));

/** A gateway whose transcription endpoint is its own mock model, with these `media.transcription` keys. */
async function transcribing(transcription: Record<string, unknown>) {
  const world = new LoopbackWorld({ minEditIntervalMs: 20 });
  gw = await startTestGateway({ channels: { loop: world.channelConfig() } });
  const model = gw.model;
  await gw.stop(false);
  gw = await startTestGateway({
    channels: { loop: world.channelConfig() },
    model,
    sections: { media: { transcription: { base_url: model.url, ...transcription } } },
  });
  return { world, gw };
}

describe("attachments into the agent", () => {
  it("refuses a type outside allowed_types with a notice, and still answers the caption", async () => {
    const { world, gw } = await boot({ allowed_types: ["image/*"] });
    gw.model.enqueue({ text: "Answered the words." });
    await world.userSendsFile({
      kind: "file",
      name: "tool.exe",
      mime: "application/x-msdownload",
      data: Buffer.from("MZ"),
      caption: "run this?",
    });
    await eventually(() => texts(world).includes("Answered the words."), 10_000, "the reply");
    expect(texts(world).some((t) => t.includes("tool.exe") && t.includes("image/*"))).toBe(true);
    expect(lastUserText(gw.model.requests.at(-1)!)).toBe("run this?");
    expect(readdirSync(gw.dir)).not.toContain("files");
  });

  it("lists an image for a model without vision instead of sending it", async () => {
    const { world, gw } = await boot();
    gw.model.enqueue({ text: "I cannot see it." });
    await world.userSendsFile({ kind: "image", name: "shot.png", mime: "image/png", data: PNG, caption: "look" });
    await eventually(() => texts(world).includes("I cannot see it."), 10_000, "the reply");
    const request = gw.model.requests.at(-1)!;
    expect(lastUserImages(request)).toEqual([]);
    expect(lastUserText(request)).toMatch(/shot\.png \(image\/png, 70 B\): an image; you cannot see images here/);
  });

  it("takes an image's type from its bytes when the platform names a wrong one", async () => {
    const { world, gw } = await boot({}, { supports_vision: true });
    gw.model.enqueue({ text: "A PNG after all." });
    await world.userSendsFile({ kind: "image", name: "photo.jpg", mime: "image/jpeg", data: PNG });
    await eventually(() => texts(world).includes("A PNG after all."), 10_000, "the reply");
    expect(lastUserImages(gw.model.requests.at(-1)!)[0]).toMatch(/^data:image\/png;base64,/);
  });

  it("says so when voice cannot be transcribed, and keeps the note", async () => {
    const { world, gw } = await boot();
    gw.model.enqueue({ text: "Noted." });
    await world.userSendsFile({
      kind: "audio",
      name: "voice.ogg",
      mime: "audio/ogg",
      data: Buffer.from("OggS"),
      caption: "see the note",
    });
    await eventually(() => texts(world).includes("Noted."), 10_000, "the reply");
    expect(texts(world).some((t) => t.includes("can't be transcribed"))).toBe(true);
    expect(lastUserText(gw.model.requests.at(-1)!)).toContain("voice.ogg");
    expect(gw.model.transcriptions).toHaveLength(0);
  });

  it("uses the platform's own transcript when no endpoint is configured", async () => {
    const { world, gw } = await boot();
    world.uploads.set("v1", Buffer.from("#!AMR"));
    gw.model.enqueue({ text: "Heard you." });
    await world.deliver({
      channel: "loop",
      eventId: "voice-1",
      ref: { channel: "loop", key: "loop:w:dm1", chatId: "dm1", chatType: "direct" },
      user: { id: "u1" },
      text: "",
      mentioned: true,
      attachments: [{ kind: "audio", name: "voice.amr", source: { fileId: "v1", recognition: "meet at noon" } }],
      sentAt: Date.now(),
    });
    await eventually(() => texts(world).includes("Heard you."), 10_000, "the reply");
    expect(lastUserText(gw.model.requests.at(-1)!)).toContain("[Voice note voice.amr]: meet at noon");
    expect(texts(world).some((t) => t.includes("can't be transcribed"))).toBe(false);
  });

  it("echoes the transcript when asked to", async () => {
    const { world } = await transcribing({ echo: true });
    const model = gw!.model;
    model.setTranscript("call me back tomorrow");
    model.enqueue({ text: "Will do." });
    await world.userSendsFile({ kind: "audio", name: "voice.ogg", mime: "audio/ogg", data: Buffer.from("OggS") });
    await eventually(() => texts(world).includes("Will do."), 10_000, "the reply");
    expect(texts(world)).toContain("🎤 “call me back tomorrow”");
  });
});

describe("time limits on a channel that takes no signal", () => {
  it("gives up on downloads that never answer at download_timeout_ms, fetching the message's files at once", async () => {
    const limit = 2500;
    const { world, gw } = await boot({ download_timeout_ms: limit });
    world.uploads.set("slow", Buffer.from("never comes"));
    world.uploads.set("fine", PDF);
    world.hangNext("download", 2);
    gw.model.enqueue({ text: "Read the one that came." });
    const sent = Date.now();
    const file = (name: string, fileId: string) => ({ kind: "file" as const, name, mime: "text/plain", source: { fileId } });
    await world.deliver({
      channel: "loop",
      eventId: "three-files",
      ref: { channel: "loop", key: "loop:w:dm1", chatId: "dm1", chatType: "direct" },
      user: { id: "u1" },
      text: "all of them please",
      mentioned: true,
      attachments: [file("one.txt", "slow"), file("two.txt", "slow"), { ...file("report.pdf", "fine"), mime: "application/pdf" }],
      sentAt: Date.now(),
    });
    await eventually(() => texts(world).some((t) => t.includes("two.txt")), 15_000, "the notices");
    // Downloaded one after the other, the two stuck files would take two limits; at once, one.
    expect(Date.now() - sent).toBeLessThan(2 * limit);
    expect(texts(world).slice(0, 2)).toEqual([
      "I couldn't download “one.txt” within 2.5 seconds. Please send it again.",
      "I couldn't download “two.txt” within 2.5 seconds. Please send it again.",
    ]);
    await eventually(() => texts(world).includes("Read the one that came."), 10_000, "the reply");
    const asked = lastUserText(gw.model.requests.at(-1)!);
    expect(asked).toContain("all of them please");
    expect(asked).toContain("report.pdf");
    expect(asked).not.toContain("one.txt");
  });

  it("gives up on a file upload that never answers after platform_call_timeout_ms, with a notice", async () => {
    const world = new LoopbackWorld({ minEditIntervalMs: 20 });
    gw = await startTestGateway({ channels: { loop: world.channelConfig() }, gateway: { platform_call_timeout_ms: 1000 } });
    world.hangNext("sendFile");
    gw.model.enqueue({ toolCalls: [{ name: "send_file", args: { name: "notes.txt" } }] }, { text: "Sent it back." });
    await world.userSendsFile({ kind: "file", name: "notes.txt", mime: "text/plain", data: Buffer.from("hi"), caption: "echo" });
    await eventually(() => texts(world).includes("Sent it back."), 10_000, "the reply");
    await eventually(() => texts(world).find((t) => t.includes("couldn't send “notes.txt”")), 10_000, "the notice");
    expect(world.sentFiles).toHaveLength(0);
  });
});

describe("time limits on transcription", () => {
  const withTranscription = (timeoutMs: number) => transcribing({ timeout_ms: timeoutMs });
  const voice = { kind: "audio" as const, name: "voice.ogg", mime: "audio/ogg", data: Buffer.from("OggS-note") };

  it("gives up on a transcription whose body stalls at timeout_ms; the note is listed and the text answered", async () => {
    const { world, gw } = await withTranscription(1000);
    gw.model.stallNextTranscription("body-stalls");
    gw.model.enqueue({ text: "Got your words." });
    const sent = Date.now();
    await world.userSendsFile({ ...voice, caption: "and this" });
    await eventually(() => texts(world).includes("Got your words."), 15_000, "the reply");
    expect(texts(world)[0]).toBe("I couldn't transcribe “voice.ogg”. Please try again, or type it.");
    expect(Date.now() - sent).toBeLessThan(1000 + 5000);
    const asked = lastUserText(gw.model.requests.at(-1)!);
    expect(asked).toContain("and this");
    expect(asked).toContain("voice.ogg");
    expect(asked).toContain("could not be transcribed");
  });

  it("/stop during a transcription ends it with the stopped notice", async () => {
    const { world, gw } = await withTranscription(120_000);
    gw.model.stallNextTranscription("no-answer");
    await world.userSendsFile({ ...voice, caption: "listen" });
    await eventually(() => gw.model.transcriptions.length === 1, 10_000, "the transcription under way");
    await world.userSays("/stop");
    await eventually(() => texts(world).some((t) => t.includes("Stopped: the reply was cancelled.")), 10_000, "the notice");
    expect(texts(world).some((t) => t.includes("transcribe"))).toBe(false);
    expect(gw.model.requests).toHaveLength(0);
  });
});

describe("thread folders and file tools", () => {
  const root = () => mkdtempSync(path.join(tmpdir(), "antler-files-"));

  it("makes names safe and never leaves the thread's folder", async () => {
    expect(safeFileName("../../etc/passwd")).toBe("passwd");
    expect(safeFileName("C:\\Users\\me\\report.pdf")).toBe("report.pdf");
    expect(safeFileName("..")).toBe("file");
    expect(safeFileName("a\u0000b<c>.txt")).toBe("a_b_c_.txt");
    expect(safeFileName(`${"x".repeat(300)}.pdf`)).toHaveLength(120);
    const files = new ThreadFiles(root());
    const first = await files.save("t1", "same.txt", Buffer.from("one"));
    const second = await files.save("t1", "same.txt", Buffer.from("two"));
    expect([first.name, second.name]).toEqual(["same.txt", "same (2).txt"]);
    expect(path.dirname(first.path)).toBe(files.folder("t1"));
    expect(await files.find("t1", "../t2/x.txt")).toBeUndefined();
    expect(await files.find("t2", "same.txt"), "another thread's file").toBeUndefined();
    expect(() => files.folder("../escape")).toThrow();
  });

  it("read_file reads text and PDFs of its own thread only, in parts; send_file checks the limit", async () => {
    const files = new ThreadFiles(root());
    const outbox = new FileOutbox();
    const [readFile, sendFile] = fileTools({ files, outbox, maxSendBytes: 10 });
    await files.save("t1", "long.txt", Buffer.from("abcdefghij".repeat(30)));
    await files.save("t1", "report.pdf", PDF);
    await files.save("t1", "blob.bin", Buffer.from([1, 0, 2, 0]));
    const call = (tool: StructuredToolInterface | undefined, args: Record<string, unknown>, thread = "t1") =>
      tool!.invoke(args, { configurable: { thread_id: thread } }) as Promise<string>;
    expect(await call(readFile, { name: "report.pdf" })).toContain("Quarterly numbers are up");
    const part = await call(readFile, { name: "long.txt", max_chars: 100 });
    expect(part).toMatch(/^abcdefghij/);
    expect(part).toContain("read on with offset 100");
    expect(await call(readFile, { name: "blob.bin" })).toMatch(/not a text or PDF file/);
    expect(await call(readFile, { name: "report.pdf" }, "t2")).toMatch(/no file named/);
    expect(await call(sendFile, { name: "long.txt" })).toMatch(/over the limit/);
    expect(outbox.take("t1")).toEqual([]);
  });

  it("names types by content and by extension", () => {
    expect(sniffImage(PNG)).toBe("image/png");
    expect(sniffImage(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
    expect(sniffImage(Buffer.from("hello"))).toBeUndefined();
    expect(mimeOf("a.PDF")).toBe("application/pdf");
    expect(mimeOf("a.bin", "text/plain; charset=utf-8")).toBe("text/plain");
    expect(mimeOf("voice.ogg", "application/octet-stream")).toBe("audio/ogg");
  });
});
