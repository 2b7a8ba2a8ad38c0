/**
 * Files on Discord at adapter level: attachments read from messages (photos with captions,
 * documents, voice messages), downloads from the fake's CDN within a byte limit, uploads where
 * replies go, Discord's 10 MiB limit, and the contract driver's `userSendsFile`/`botFiles`. The
 * real discord.js talks to the fake Discord.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { InboundAttachment, InboundMessage } from "../../src/channels/types.js";
import { ChannelError, FileTooLargeError } from "../../src/errors.js";
import { eventually } from "../contract/gateway.js";
import { DiscordDriver } from "../fakes/discord/driver.js";
import { ALICE, BOB, CHANNELS, type FakeDiscord, type Json, UPLOAD_LIMIT } from "../fakes/discord/index.js";
import { type Rig, startRig } from "../fakes/discord/rig.js";

let rig: Rig | undefined;

afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

async function boot(config: Record<string, unknown> = {}): Promise<Rig> {
  rig = await startRig(config);
  return rig;
}

/** The inbound message the adapter made of Discord message `id`. */
function arrived(r: Rig, id: string): Promise<InboundMessage> {
  return eventually(() => r.inbox.find((m) => m.eventId === id), 10_000, `message ${id} in the sink`);
}

function only(msg: InboundMessage): InboundAttachment {
  expect(msg.attachments).toHaveLength(1);
  return msg.attachments![0]!;
}

/** The link a client gets for a stored message's first attachment. */
function linkOf(fake: FakeDiscord, messageId: string): string {
  const stored = fake.world.messages.get(messageId);
  if (!stored) throw new Error(`no message ${messageId}`);
  const files = fake.world.messageJson(stored).attachments as Json[];
  return String(files[0]?.url);
}

async function fetchBytes(url: string): Promise<Uint8Array> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

const png = () => new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...randomBytes(2048)]);
const pdf = () => new Uint8Array([...Buffer.from("%PDF-1.7\n"), ...randomBytes(4096)]);
const ogg = () => new Uint8Array([...Buffer.from("OggS"), ...randomBytes(3000)]);

describe("discord files in", () => {
  it("reads a photo with a caption as the text plus one image, and downloads its exact bytes", async () => {
    const r = await boot();
    const bytes = png();
    const sent = r.fake.sendFiles(ALICE, [{ name: "screen shot.png", data: bytes, contentType: "image/png" }], "what is this?");
    const msg = await arrived(r, sent.id);
    expect(msg.text).toBe("what is this?");
    const file = only(msg);
    expect(file).toMatchObject({ kind: "image", name: "screen shot.png", mime: "image/png", size: bytes.byteLength });
    expect(file.source).toMatchObject({ id: sent.attachments![0]!.id, channelId: sent.channelId, messageId: sent.id });
    expect(await r.channel.download(msg, file, 1024 * 1024)).toEqual(bytes);
  });

  it("reads a document as a file and a voice message as audio, each downloadable", async () => {
    const r = await boot();
    const doc = pdf();
    const voice = ogg();
    const docMsg = await arrived(
      r,
      r.fake.sendFiles(ALICE, [{ name: "report.pdf", data: doc, contentType: "application/pdf" }]).id,
    );
    expect(docMsg.text).toBe("");
    expect(only(docMsg)).toMatchObject({ kind: "file", name: "report.pdf", mime: "application/pdf", size: doc.byteLength });
    expect(await r.channel.download(docMsg, only(docMsg), doc.byteLength)).toEqual(doc);

    const voiceMsg = await arrived(r, r.fake.sendVoice(ALICE, voice, { durationSecs: 3.2 }).id);
    expect(voiceMsg.text).toBe("");
    expect(only(voiceMsg)).toMatchObject({ kind: "audio", name: "voice-message.ogg", mime: "audio/ogg" });
    expect(await r.channel.download(voiceMsg, only(voiceMsg), 1024 * 1024)).toEqual(voice);
  });

  it("goes by the extension when Discord gives no content type, and reads several files of one message", async () => {
    const r = await boot();
    const sent = r.fake.sendFiles(ALICE, [
      { name: "diagram.PNG", data: png() },
      { name: "memo.mp3", data: randomBytes(64) },
      { name: "data.bin", data: randomBytes(64) },
    ]);
    const msg = await arrived(r, sent.id);
    expect(msg.attachments?.map((a) => [a.kind, a.name, a.mime])).toEqual([
      ["image", "diagram.PNG", undefined],
      ["audio", "memo.mp3", undefined],
      ["file", "data.bin", undefined],
    ]);
  });

  it("keeps the mention rules in a server: a file alone reaches the core unaddressed, with a mention addressed", async () => {
    const r = await boot();
    const plain = await arrived(
      r,
      r.fake.sendFiles(BOB, [{ name: "cat.jpg", data: png(), contentType: "image/jpeg" }], "", { channelId: CHANNELS.general })
        .id,
    );
    expect(plain).toMatchObject({ text: "", mentioned: false });
    expect(plain.inThread).toBeUndefined();

    const addressed = await arrived(
      r,
      r.fake.sendFiles(ALICE, [{ name: "log.txt", data: randomBytes(32), contentType: "text/plain; charset=utf-8" }], "", {
        channelId: CHANNELS.general,
        mention: true,
      }).id,
    );
    expect(addressed).toMatchObject({ text: "", mentioned: true });
    expect(only(addressed)).toMatchObject({ kind: "file", name: "log.txt" });
    // Its thread is named after the file, since there are no words to name it.
    expect(addressed.ref.extra?.threadName).toBe("log.txt");
  });

  it("refuses a file over maxBytes before fetching when Discord stated the size, and while reading when not", async () => {
    const r = await boot();
    const bytes = pdf();
    const msg = await arrived(r, r.fake.sendFiles(ALICE, [{ name: "big.pdf", data: bytes, contentType: "application/pdf" }]).id);
    const file = only(msg);
    const limit = bytes.byteLength - 1;
    const stated = await r.channel.download(msg, file, limit).catch((e: unknown) => e);
    expect(stated).toBeInstanceOf(FileTooLargeError);
    expect(stated).toMatchObject({ maxBytes: limit, size: bytes.byteLength });
    expect(r.fake.cdn.fetches, "nothing fetched").toEqual([]);

    const { size: _size, ...unsized } = file;
    const read = await r.channel.download(msg, unsized, limit).catch((e: unknown) => e);
    expect(read).toBeInstanceOf(FileTooLargeError);
    expect(r.fake.cdn.fetches.map((f) => f.status)).toEqual([200]);
    // At the limit exactly, it is read whole.
    expect(await r.channel.download(msg, unsized, bytes.byteLength)).toEqual(bytes);
  });

  it("gets a fresh link from the message when the old one has expired", async () => {
    const r = await boot();
    const bytes = png();
    const msg = await arrived(r, r.fake.sendFiles(ALICE, [{ name: "old.png", data: bytes, contentType: "image/png" }]).id);
    r.fake.expireAttachmentLinks();
    expect(await r.channel.download(msg, only(msg), 1024 * 1024)).toEqual(bytes);
    expect(r.fake.cdn.fetches.map((f) => f.status)).toEqual([404, 200]);
    expect(r.fake.calls.some((c) => c.method === "GET" && c.path === `/channels/${msg.ref.chatId}/messages/${msg.eventId}`)).toBe(
      true,
    );
  });

  it("says the file is gone when its message was deleted and the link no longer opens", async () => {
    const r = await boot();
    const msg = await arrived(r, r.fake.sendFiles(ALICE, [{ name: "gone.pdf", data: pdf(), contentType: "application/pdf" }]).id);
    r.fake.expireAttachmentLinks();
    r.fake.world.messages.get(msg.eventId)!.deleted = true;
    const err = await r.channel.download(msg, only(msg), 1024 * 1024).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect(err).toMatchObject({ code: "not_found" });
  });
});

describe("discord files out", () => {
  it("uploads an image and a PDF into the DM, each downloadable with identical bytes", async () => {
    const r = await boot();
    const msg = await arrived(r, r.fake.dm(ALICE, "send me the chart and the report").id);
    const chart = png();
    const report = pdf();
    const first = await r.channel.sendFile(msg.ref, { name: "chart.png", mime: "image/png", data: chart, kind: "image" });
    const second = await r.channel.sendFile(msg.ref, { name: "report.pdf", mime: "application/pdf", data: report, kind: "file" });
    const dm = r.fake.dmChannelOf(ALICE);
    const posted = r.fake.messagesIn(dm).filter((m) => m.author.id === r.fake.bot.id);
    expect(posted.map((m) => m.id)).toEqual([first.id, second.id]);
    expect(posted.map((m) => m.files.map((f) => [f.name, f.contentType]))).toEqual([
      [["chart.png", "image/png"]],
      [["report.pdf", "application/pdf"]],
    ]);
    expect(await fetchBytes(linkOf(r.fake, first.id))).toEqual(chart);
    expect(await fetchBytes(linkOf(r.fake, second.id))).toEqual(report);
    const upload = r.fake.calls.find((c) => c.method === "POST" && c.path === `/channels/${dm}/messages`);
    expect(upload?.body).toMatchObject({ attachments: [{ id: 0, filename: "chart.png" }], allowed_mentions: { parse: [] } });
  });

  it("posts into the conversation's thread in a server, starting it when the file is the first reply", async () => {
    const r = await boot();
    const asked = r.fake.say(CHANNELS.general, ALICE, "draw me something", { mention: true });
    const msg = await arrived(r, asked.id);
    const image = png();
    const handle = await r.channel.sendFile(msg.ref, { name: "drawing.png", mime: "image/png", data: image, kind: "image" });
    expect(r.fake.threads().map((t) => t.id)).toContain(asked.id);
    const inThread = r.fake.messagesIn(asked.id).find((m) => m.id === handle.id);
    expect(inThread?.files[0]?.data).toEqual(image);
    expect(r.fake.messagesIn(CHANNELS.general).filter((m) => m.author.id === r.fake.bot.id)).toEqual([]);
  });

  it("fails an upload over Discord's 10 MiB with FileTooLargeError, and posts nothing", async () => {
    const r = await boot();
    expect(r.channel.maxUploadBytes).toBe(UPLOAD_LIMIT);
    const msg = await arrived(r, r.fake.dm(ALICE, "send the dump").id);
    const data = new Uint8Array(UPLOAD_LIMIT + 1);
    const err = await r.channel
      .sendFile(msg.ref, { name: "dump.bin", mime: "application/octet-stream", data, kind: "file" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect(err).toMatchObject({ code: "content_rejected", maxBytes: UPLOAD_LIMIT });
    expect((err as Error).message).toMatch(/larger than the limit of 10485760 bytes/);
    expect(r.fake.calls.at(-1)).toMatchObject({ method: "POST", status: 413, code: 40005 });
    expect(r.fake.messagesIn(r.fake.dmChannelOf(ALICE)).filter((m) => m.author.id === r.fake.bot.id)).toEqual([]);
  });
});

describe("the fake's file endpoints", () => {
  it("refuse an unknown attachment, a forged link and an upload without the bot token", async () => {
    const r = await boot();
    const sent = r.fake.sendFiles(ALICE, [{ name: "a.png", data: png(), contentType: "image/png" }]);
    await arrived(r, sent.id);
    const link = linkOf(r.fake, sent.id);
    expect((await fetch(link.replace(sent.attachments![0]!.id, "1180000000000009999"))).status).toBe(404);
    expect((await fetch(link.replace(/hm=[0-9a-f]+/, "hm=00"))).status).toBe(404);
    expect((await fetch(link)).status).toBe(200);

    const form = new FormData();
    form.append("files[0]", new Blob([png()], { type: "image/png" }), "x.png");
    form.append("payload_json", JSON.stringify({ attachments: [{ id: 0, filename: "x.png" }] }));
    const dm = r.fake.dmChannelOf(ALICE);
    const res = await fetch(`${r.fake.apiBase}/v10/channels/${dm}/messages`, { method: "POST", body: form });
    expect(res.status).toBe(401);
    const listed = new FormData();
    listed.append("payload_json", JSON.stringify({ attachments: [{ id: 3, filename: "missing.png" }] }));
    const missing = await fetch(`${r.fake.apiBase}/v10/channels/${dm}/messages`, {
      method: "POST",
      body: listed,
      headers: { authorization: `Bot ${r.fake.token}` },
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ code: 50035 });
  });
});

describe("the discord contract driver's files", () => {
  it("sends a photo with a caption and a voice note in Alice's DM, and shows the files the bot posted", async () => {
    const driver = await DiscordDriver.start();
    // `enabled` is read by the core's config loader, not by the channel's schema.
    const { enabled: _enabled, ...config } = driver.channelConfig({ gatewayUrl: "http://127.0.0.1:1" });
    rig = await startRig(config, {}, driver.fake);
    const r = rig;
    const photo = png();
    await driver.userSendsFile({ kind: "image", name: "photo.png", mime: "image/png", data: photo, caption: "look" });
    const withPhoto = await eventually(() => r.inbox.find((m) => m.attachments?.[0]?.kind === "image"), 10_000, "the photo");
    expect(withPhoto.text).toBe("look");
    expect(withPhoto.ref.chatId).toBe(driver.dmChannel);
    expect(await r.channel.download(withPhoto, only(withPhoto), 1024 * 1024)).toEqual(photo);

    const voice = ogg();
    await driver.userSendsFile({ kind: "audio", name: "voice-message.ogg", mime: "audio/ogg", data: voice });
    const withVoice = await eventually(() => r.inbox.find((m) => m.attachments?.[0]?.kind === "audio"), 10_000, "the voice note");
    expect(withVoice.text).toBe("");
    expect(await r.channel.download(withVoice, only(withVoice), 1024 * 1024)).toEqual(voice);

    expect(driver.botFiles()).toEqual([]);
    const back = png();
    const doc = pdf();
    await r.channel.sendFile(withPhoto.ref, { name: "edited.png", mime: "image/png", data: back, kind: "image" });
    await r.channel.sendFile(withPhoto.ref, { name: "notes.pdf", mime: "application/pdf", data: doc, kind: "file" });
    expect(driver.botFiles()).toEqual([
      { name: "edited.png", data: back, kind: "image" },
      { name: "notes.pdf", data: doc, kind: "file" },
    ]);
  });
});
