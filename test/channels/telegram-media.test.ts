import { randomBytes } from "node:crypto";
import { Telegraf } from "telegraf";
import { afterEach, describe, expect, it } from "vitest";
import { mapTelegramError } from "../../src/channels/telegram/map-error.js";
import { updateProblem } from "../../src/channels/telegram/webhook-check.js";
import type { ConversationRef, InboundMessage, OutboundFile } from "../../src/channels/types.js";
import { FileTooLargeError, PlatformNotFoundError } from "../../src/errors.js";
import { ALICE, TelegramDriver } from "../fakes/telegram/driver.js";
import { DOWNLOAD_LIMIT, PHOTO_LIMIT, UPLOAD_LIMIT } from "../fakes/telegram/files.js";
import { alice, FORUM, GROUP, type Rig, startRig, waitFor } from "../fakes/telegram/rig.js";

let rig: Rig | undefined;
let driver: TelegramDriver | undefined;
afterEach(async () => {
  await rig?.close();
  await driver?.close();
  rig = undefined;
  driver = undefined;
});

const BOT = "antler_test_bot";
const DM = { id: alice.id, type: "private" as const };
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Bytes that start like a PNG (the fake's sendPhoto checks the signature), then random. */
function png(size: number): Uint8Array {
  const data = new Uint8Array(randomBytes(size));
  data.set(PNG_SIGNATURE);
  return data;
}

function dmRef(r: Rig): ConversationRef {
  return { channel: "telegram", key: `telegram:${r.fake.bot.id}:${alice.id}`, chatId: String(alice.id), chatType: "direct" };
}

async function next(r: Rig, count = 1): Promise<InboundMessage> {
  const inbox = await waitFor(() => r.inbox.length >= count && r.inbox, 5000, `message ${count}`);
  return inbox[count - 1] as InboundMessage;
}

function attachmentOf(msg: InboundMessage) {
  expect(msg.attachments).toHaveLength(1);
  return msg.attachments![0]!;
}

function callsTo(r: Rig, method: string) {
  return r.fake.calls.filter((c) => c.method === method);
}

describe("telegram media inbound", () => {
  it("a photo with a caption is its text plus one image, and download returns the largest rendition's bytes", async () => {
    rig = await startRig();
    const bytes = randomBytes(4096);
    rig.fake.sendPhoto(DM, alice, bytes, { caption: "what is on this screenshot?" });
    const msg = await next(rig);
    expect(msg.text).toBe("what is on this screenshot?");
    expect(msg.mentioned).toBe(true);
    const attachment = attachmentOf(msg);
    expect(attachment).toMatchObject({ kind: "image", name: "photo.jpg", mime: "image/jpeg", size: 4096 });
    const data = await rig.channel.download(msg, attachment, 1024 * 1024);
    expect(Buffer.from(data).equals(bytes)).toBe(true);
    // The attachment is JSON, as the core stores it.
    expect(JSON.parse(JSON.stringify(attachment))).toEqual(attachment);
  });

  it("a document keeps its name and MIME type, a voice note is audio, and both download", async () => {
    rig = await startRig();
    const pdf = randomBytes(3000);
    const voice = randomBytes(1500);
    rig.fake.sendDocument(DM, alice, pdf, "Q3 report.pdf");
    rig.fake.sendVoice(DM, alice, voice, { duration: 3 });
    const doc = await next(rig, 1);
    const note = await next(rig, 2);

    expect(doc.text).toBe("");
    const docFile = attachmentOf(doc);
    expect(docFile).toMatchObject({ kind: "file", name: "Q3 report.pdf", mime: "application/pdf", size: 3000 });
    expect(Buffer.from(await rig.channel.download(doc, docFile, 10_000)).equals(pdf)).toBe(true);

    expect(note.text).toBe("");
    const voiceFile = attachmentOf(note);
    expect(voiceFile).toMatchObject({ kind: "audio", name: "voice.ogg", mime: "audio/ogg", size: 1500 });
    expect(Buffer.from(await rig.channel.download(note, voiceFile, 10_000)).equals(voice)).toBe(true);
  });

  it("an audio file is audio with its name; a picture sent as a file is an image", async () => {
    rig = await startRig();
    rig.fake.sendAudio(DM, alice, randomBytes(800), "song.mp3");
    rig.fake.sendDocument(DM, alice, png(900), "diagram.png");
    expect(attachmentOf(await next(rig, 1))).toMatchObject({ kind: "audio", name: "song.mp3", mime: "audio/mpeg", size: 800 });
    expect(attachmentOf(await next(rig, 2))).toMatchObject({ kind: "image", name: "diagram.png", mime: "image/png", size: 900 });
  });

  it("keeps the mention rules in groups: a photo without mention is not addressed, one with a mention in its caption is", async () => {
    rig = await startRig();
    rig.fake.sendPhoto(GROUP, alice, randomBytes(500));
    rig.fake.sendPhoto(GROUP, alice, randomBytes(500), { caption: `@${BOT} what is this?` });
    const quiet = await next(rig, 1);
    const asked = await next(rig, 2);
    expect(quiet).toMatchObject({ text: "", mentioned: false });
    expect(quiet.attachments).toHaveLength(1);
    expect(asked).toMatchObject({ text: "what is this?", mentioned: true });
    expect(attachmentOf(asked).kind).toBe("image");
  });

  it("a webhook body whose file fields are malformed is refused before the adapter reads it", () => {
    const message = { message_id: 1, chat: { id: 5, type: "private" }, from: { id: 5, is_bot: false }, date: 1 };
    const size = { file_id: "a", file_unique_id: "b", width: 10, height: 10 };
    expect(updateProblem({ update_id: 1, message: { ...message, photo: [size] } })).toBeUndefined();
    expect(updateProblem({ update_id: 1, message: { ...message, photo: size } })).toBe("message: photo is not a list of sizes");
    expect(updateProblem({ update_id: 1, message: { ...message, voice: { file_id: 7 } } })).toBe("message: voice is not a file");
    expect(
      updateProblem({ update_id: 1, message: { ...message, document: { file_id: "a", file_unique_id: "b", file_size: "9" } } }),
    ).toBe("message: document is not a file");
  });

  it("a sticker carries no attachment", async () => {
    rig = await startRig();
    rig.fake.sticker(alice);
    const msg = await next(rig);
    expect(msg.text).toBe("");
    expect(msg.attachments).toBeUndefined();
  });
});

describe("telegram media download limits", () => {
  it("refuses a file over maxBytes before any call when its size is known", async () => {
    rig = await startRig();
    rig.fake.sendDocument(DM, alice, randomBytes(2000), "big.bin");
    const msg = await next(rig);
    const err = await rig.channel.download(msg, attachmentOf(msg), 1999).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect(err).toMatchObject({ maxBytes: 1999, size: 2000 });
    expect(callsTo(rig, "getFile")).toHaveLength(0);
    expect(rig.fake.fileDownloads).toHaveLength(0);
  });

  it("without a size in the message, refuses once getFile states it, without fetching the file", async () => {
    rig = await startRig();
    rig.fake.sendDocument(DM, alice, randomBytes(2000), "big.bin");
    const msg = await next(rig);
    const { size: _, ...unsized } = attachmentOf(msg);
    const err = await rig.channel.download(msg, unsized, 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect(err).toMatchObject({ maxBytes: 1000, size: 2000 });
    expect(callsTo(rig, "getFile")).toHaveLength(1);
    expect(rig.fake.fileDownloads).toHaveLength(0);
  });

  it("when neither the message nor getFile states the size, the download itself stops at maxBytes", async () => {
    rig = await startRig();
    rig.fake.sendDocument(DM, alice, randomBytes(5000), "big.bin");
    const msg = await next(rig);
    rig.fake.api.getFileStatesSize = false;
    const { size: _, ...unsized } = attachmentOf(msg);
    const err = await rig.channel.download(msg, unsized, 4999).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect(err).toMatchObject({ maxBytes: 4999 });
    expect(rig.fake.fileDownloads).toHaveLength(1);
    expect(Buffer.from(await rig.channel.download(msg, unsized, 5000))).toHaveLength(5000);
  });

  it("files past the Bot API's 20 MB download limit: refused up front, and getFile's 'file is too big' maps to the same error", async () => {
    rig = await startRig();
    rig.fake.sendDocument(DM, alice, new Uint8Array(DOWNLOAD_LIMIT + 1), "video.mkv");
    const msg = await next(rig);
    const attachment = attachmentOf(msg);
    const upFront = await rig.channel.download(msg, attachment, 100 * 1024 * 1024).catch((e: unknown) => e);
    expect(upFront).toMatchObject({ maxBytes: DOWNLOAD_LIMIT, size: DOWNLOAD_LIMIT + 1 });
    expect(callsTo(rig, "getFile")).toHaveLength(0);

    const { size: _, ...unsized } = attachment;
    const refused = await rig.channel.download(msg, unsized, 100 * 1024 * 1024).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(FileTooLargeError);
    expect(refused).toMatchObject({ maxBytes: DOWNLOAD_LIMIT });
    expect(callsTo(rig, "getFile")).toEqual([
      expect.objectContaining({ status: 400, description: "Bad Request: file is too big" }),
    ]);
  });

  it("an unknown file_id is not found", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    const msg = await next(rig);
    const err = await rig.channel
      .download(msg, { kind: "file", name: "x.bin", source: { file_id: "BQACnope", file_unique_id: "nope" } }, 1000)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformNotFoundError);
  });

  it("the fake serves files only with the bot's token", async () => {
    rig = await startRig();
    const data = randomBytes(100);
    rig.fake.sendDocument(DM, alice, data, "a.bin");
    const msg = await next(rig);
    const fileId = attachmentOf(msg).source.file_id as string;
    const path = rig.fake.files.get(fileId)!.file_path;
    const wrong = await fetch(`${rig.fake.apiRoot}/file/bot123456:wrong/${path}`);
    expect(wrong.status).toBe(401);
    const missing = await fetch(`${rig.fake.apiRoot}/file/bot${rig.fake.token}/documents/none.bin`);
    expect(missing.status).toBe(404);
    const right = await fetch(`${rig.fake.apiRoot}/file/bot${rig.fake.token}/${path}`);
    expect(Buffer.from(await right.arrayBuffer()).equals(data)).toBe(true);
  });
});

describe("telegram sendFile", () => {
  const image = (data: Uint8Array, name = "chart.png"): OutboundFile => ({ name, mime: "image/png", data, kind: "image" });
  const pdf = (data: Uint8Array, name = "summary.pdf"): OutboundFile => ({ name, mime: "application/pdf", data, kind: "file" });

  it("posts an image as a photo and a PDF as a document, with identical bytes, in the conversation", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await next(rig);
    const picture = png(5000);
    const report = randomBytes(7000);
    const photo = await rig.channel.sendFile(dmRef(rig), image(picture));
    const doc = await rig.channel.sendFile(dmRef(rig), pdf(report));

    const files = rig.fake.botFiles(alice.id);
    expect(files.map((f) => [f.kind, f.name])).toEqual([
      ["photo", "chart.png"],
      ["document", "summary.pdf"],
    ]);
    expect(Buffer.from(files[0]!.data).equals(picture)).toBe(true);
    expect(Buffer.from(files[1]!.data).equals(report)).toBe(true);
    expect(files.map((f) => String(f.message.message_id))).toEqual([photo.id, doc.id]);
    expect(callsTo(rig, "sendPhoto")).toHaveLength(1);
    expect(callsTo(rig, "sendDocument")).toHaveLength(1);
  });

  it("what the bot posted downloads back through getFile as a user's client would", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    const msg = await next(rig);
    const report = randomBytes(2500);
    await rig.channel.sendFile(dmRef(rig), pdf(report, "notes.pdf"));
    const [posted] = rig.fake.botFiles(alice.id);
    const back = await rig.channel.download(
      msg,
      { kind: "file", name: "notes.pdf", source: { file_id: posted!.message.media!.file.file_id } },
      10_000,
    );
    expect(Buffer.from(back).equals(report)).toBe(true);
  });

  it("posts in the forum topic of the conversation, and under the user's message in groups", async () => {
    rig = await startRig();
    rig.fake.say(FORUM, alice, `@${BOT} send me the file`, { threadId: 77 });
    const topic = await next(rig, 1);
    rig.fake.say(GROUP, alice, `@${BOT} and here`);
    const group = await next(rig, 2);
    expect(topic.ref.threadId).toBe("77");
    expect(group.ref.replyToId).toBeDefined();

    await rig.channel.sendFile(topic.ref, pdf(randomBytes(100)));
    await rig.channel.sendFile(group.ref, image(png(100)));
    const [inTopic] = rig.fake.botFiles(FORUM.id, 77);
    const [inGroup] = rig.fake.botFiles(GROUP.id);
    expect(inTopic?.message.threadId).toBe(77);
    expect(inGroup?.message.replyTo).toBe(Number(group.ref.replyToId));
    expect(rig.fake.botFiles(FORUM.id)).toHaveLength(1);
  });

  it("an image past sendPhoto's 10 MB, or one Telegram cannot process, goes as a document", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await next(rig);
    const big = png(PHOTO_LIMIT + 1);
    await rig.channel.sendFile(dmRef(rig), image(big, "big.png"));
    expect(callsTo(rig, "sendPhoto")).toHaveLength(0);

    const notAnImage = randomBytes(300);
    await rig.channel.sendFile(dmRef(rig), image(notAnImage, "odd.png"));
    expect(callsTo(rig, "sendPhoto")).toEqual([
      expect.objectContaining({ status: 400, description: "Bad Request: IMAGE_PROCESS_FAILED" }),
    ]);

    const files = rig.fake.botFiles(alice.id);
    expect(files.map((f) => [f.kind, f.name])).toEqual([
      ["document", "big.png"],
      ["document", "odd.png"],
    ]);
    expect(Buffer.from(files[0]!.data).equals(big)).toBe(true);
    expect(Buffer.from(files[1]!.data).equals(notAnImage)).toBe(true);
  });

  it("refuses an upload over 50 MB with FileTooLargeError before sending anything", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await next(rig);
    expect(rig.channel.maxUploadBytes).toBe(UPLOAD_LIMIT);
    const err = await rig.channel.sendFile(dmRef(rig), pdf(new Uint8Array(UPLOAD_LIMIT + 1))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect(err).toMatchObject({ maxBytes: UPLOAD_LIMIT, size: UPLOAD_LIMIT + 1, code: "content_rejected" });
    expect((err as Error).message).toMatch(/52428801 bytes.*52428800 bytes/);
    expect(callsTo(rig, "sendDocument")).toHaveLength(0);
  });

  it("the fake answers 413 to an upload over 50 MB, which the mapper turns into FileTooLargeError", async () => {
    rig = await startRig();
    rig.fake.dm(alice, "hi");
    await next(rig);
    const client = new Telegraf(rig.fake.token, { telegram: { apiRoot: rig.fake.apiRoot } }).telegram;
    const err = await client
      .sendDocument(alice.id, { source: Buffer.alloc(UPLOAD_LIMIT + 1), filename: "huge.bin" })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 413, description: "Request Entity Too Large" });
    const mapped = mapTelegramError("telegram", err, "sendDocument");
    expect(mapped).toBeInstanceOf(FileTooLargeError);
    expect(mapped).toMatchObject({ maxBytes: UPLOAD_LIMIT });
    expect(rig.fake.botFiles(alice.id)).toHaveLength(0);
  });
});

describe.each(["polling", "webhook"] as const)("telegram driver files (%s)", (mode) => {
  it("userSendsFile reaches the adapter and botFiles shows what sendFile posted", async () => {
    driver = await TelegramDriver.start({ mode });
    const d = driver;
    rig = await startRig((env) => d.channelConfig(env), { fake: d.fake });
    const shot = png(2048);
    await d.userSendsFile({ kind: "image", name: "shot.png", mime: "image/png", data: shot, caption: "look" });
    await d.userSendsFile({ kind: "file", name: "plan.pdf", mime: "application/pdf", data: randomBytes(600) });
    await d.userSendsFile({ kind: "audio", name: "note.ogg", mime: "audio/ogg", data: randomBytes(300) });
    const [photo, doc, voice] = await waitFor(() => rig!.inbox.length >= 3 && rig!.inbox, 10_000, "three files");
    expect(photo!.ref.chatId).toBe(String(ALICE.id));
    expect(photo!.text).toBe("look");
    expect(Buffer.from(await rig.channel.download(photo!, attachmentOf(photo!), 10_000))).toEqual(Buffer.from(shot));
    expect(attachmentOf(doc!)).toMatchObject({ kind: "file", name: "plan.pdf", mime: "application/pdf", size: 600 });
    expect(attachmentOf(voice!)).toMatchObject({ kind: "audio", mime: "audio/ogg", size: 300 });

    const reply = randomBytes(900);
    await rig.channel.send(photo!.ref, { text: "here is the file" });
    await rig.channel.sendFile(photo!.ref, { name: "answer.pdf", mime: "application/pdf", data: reply, kind: "file" });
    await rig.channel.sendFile(photo!.ref, { name: "answer.png", mime: "image/png", data: shot, kind: "image" });
    const files = d.botFiles();
    expect(files.map((f) => [f.kind, f.name])).toEqual([
      ["file", "answer.pdf"],
      ["image", "answer.png"],
    ]);
    expect(Buffer.from(files[0]!.data).equals(reply)).toBe(true);
    expect(Buffer.from(files[1]!.data).equals(shot)).toBe(true);
    expect(d.botMessages().map((m) => m.text)).toEqual(["here is the file"]);
  });
});
