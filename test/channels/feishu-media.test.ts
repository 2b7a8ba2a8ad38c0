/**
 * Files, images and voice on Feishu, at adapter level: the real SDK inside FeishuChannel against
 * the fake platform, which stores users' files, serves the message-resource API and takes
 * uploads with Feishu's limits.
 */
import { randomBytes } from "node:crypto";
import * as lark from "@larksuiteoapi/node-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { mapFeishuError } from "../../src/channels/feishu/map-error.js";
import type { InboundMessage } from "../../src/channels/types.js";
import { ChannelError, FileTooLargeError, PlatformNotFoundError } from "../../src/errors.js";
import { FeishuDriver } from "../fakes/feishu/driver.js";
import { DM_CHAT, GROUP_CHAT } from "../fakes/feishu/index.js";
import { type Rig, startRig, waitFor } from "../fakes/feishu/rig.js";
import { LIMITS } from "../fakes/feishu/state.js";

const MB = 1024 * 1024;

/** Bytes that start like a PNG, so the fake's image endpoint recognises them. */
function png(size: number): Uint8Array {
  const out = new Uint8Array(randomBytes(size));
  out.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return out;
}

function pdf(size: number): Uint8Array {
  const out = new Uint8Array(randomBytes(size));
  out.set(Buffer.from("%PDF-1.7\n"));
  return out;
}

let rig: Rig | undefined;
let driver: FeishuDriver | undefined;

afterEach(async () => {
  await rig?.close();
  await driver?.close();
  rig = undefined;
  driver = undefined;
});

async function rigged(mode: "websocket" | "webhook" = "websocket"): Promise<Rig> {
  rig = await startRig({ mode });
  return rig;
}

/** The next message the sink got after `count` earlier ones. */
async function nextMessage(r: Rig, count: number): Promise<InboundMessage> {
  return waitFor(() => r.inbox[count], 5000, "the message to reach the sink");
}

function resourceCalls(r: Rig): number {
  return r.fake.world.calls.filter((c) => c.op === "resource").length;
}

describe("feishu media: inbound", () => {
  it("reads a photo with a caption as its text plus one image, and downloads the exact bytes", async () => {
    const r = await rigged();
    const data = png(5000);
    await r.fake.userSendsFile({ kind: "image", name: "screen.png", mime: "image/png", data, caption: "what is this?" });
    const msg = await nextMessage(r, 0);
    expect(msg.text).toBe("what is this?");
    expect(msg.mentioned).toBe(true);
    expect(msg.attachments).toHaveLength(1);
    const [att] = msg.attachments ?? [];
    expect(att?.kind).toBe("image");
    expect(att?.name).toBe("photo.jpg");
    expect(att?.source).toMatchObject({ message_id: msg.ref.replyToId, type: "image" });
    const bytes = await r.channel.download(msg, att as NonNullable<typeof att>, 10 * MB);
    expect(Buffer.from(bytes).equals(Buffer.from(data))).toBe(true);
  });

  it("reads a lone photo as an image with empty text", async () => {
    const r = await rigged();
    const data = png(300);
    await r.fake.userSendsFile({ kind: "image", name: "x.png", mime: "image/png", data });
    const msg = await nextMessage(r, 0);
    expect(msg.text).toBe("");
    expect(msg.attachments?.map((a) => a.kind)).toEqual(["image"]);
    expect(r.fake.world.message(msg.ref.replyToId ?? "")?.msgType).toBe("image");
  });

  it("reads a document as a file (name and mime kept) and a voice note as audio, each downloadable", async () => {
    const r = await rigged();
    const doc = pdf(20_000);
    const voice = new Uint8Array(randomBytes(3000));
    await r.fake.userSendsFile({ kind: "file", name: "Q3 report.pdf", mime: "application/pdf", data: doc });
    await r.fake.userSendsFile({ kind: "audio", name: "ignored.opus", mime: "audio/ogg", data: voice, durationMs: 4200 });
    const docMsg = await nextMessage(r, 0);
    const voiceMsg = await nextMessage(r, 1);
    expect(docMsg.text).toBe("");
    expect(docMsg.attachments).toEqual([
      expect.objectContaining({ kind: "file", name: "Q3 report.pdf", mime: "application/pdf" }),
    ]);
    expect(voiceMsg.attachments).toEqual([expect.objectContaining({ kind: "audio", name: "voice.ogg", mime: "audio/ogg" })]);
    const docBytes = await r.channel.download(docMsg, docMsg.attachments?.[0] as never, 10 * MB);
    const voiceBytes = await r.channel.download(voiceMsg, voiceMsg.attachments?.[0] as never, 10 * MB);
    expect(Buffer.from(docBytes).equals(Buffer.from(doc))).toBe(true);
    expect(Buffer.from(voiceBytes).equals(Buffer.from(voice))).toBe(true);
  });

  it("keeps the group mention rule: a photo counts as addressed only with a mention or inside the bot's topic", async () => {
    const r = await rigged();
    const data = png(200);
    const plain = await r.fake.userSendsFile({ kind: "image", name: "a.png", mime: "image/png", data, chatType: "group" });
    const addressed = await r.fake.userSendsFile({
      kind: "image",
      name: "b.png",
      mime: "image/png",
      data,
      chatType: "group",
      mentionBot: true,
      caption: "see",
    });
    const first = await nextMessage(r, 0);
    const second = await nextMessage(r, 1);
    expect(first.ref.replyToId).toBe(plain.messageId);
    expect(first.mentioned).toBe(false);
    expect(second.ref.replyToId).toBe(addressed.messageId);
    expect(second.mentioned).toBe(true);
    expect(second.text).toBe("see");
    expect(second.attachments?.map((a) => a.kind)).toEqual(["image"]);
  });
});

describe("feishu media: download limits and errors", () => {
  it("refuses a file over maxBytes with FileTooLargeError, and accepts one at exactly maxBytes", async () => {
    const r = await rigged();
    const data = pdf(4096);
    await r.fake.userSendsFile({ kind: "file", name: "a.pdf", mime: "application/pdf", data });
    const msg = await nextMessage(r, 0);
    const att = msg.attachments?.[0] as NonNullable<InboundMessage["attachments"]>[number];
    await expect(r.channel.download(msg, att, 4095)).rejects.toBeInstanceOf(FileTooLargeError);
    // Without Content-Length the read itself stops at the limit.
    r.fake.world.chunkedDownloads = true;
    const err = await r.channel.download(msg, att, 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect((err as FileTooLargeError).maxBytes).toBe(1000);
    const exact = await r.channel.download(msg, att, 4096);
    expect(exact.byteLength).toBe(4096);
  });

  it("does not fetch at all when the size is known to be over the limit", async () => {
    const r = await rigged();
    await r.fake.userSendsFile({ kind: "file", name: "a.pdf", mime: "application/pdf", data: pdf(100) });
    const msg = await nextMessage(r, 0);
    const att = { ...(msg.attachments?.[0] as NonNullable<InboundMessage["attachments"]>[number]), size: 5000 };
    const before = resourceCalls(r);
    const err = await r.channel.download(msg, att, 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect((err as FileTooLargeError).size).toBe(5000);
    expect(resourceCalls(r)).toBe(before);
  });

  it("maps an unknown file key to not found and a key of the wrong type to a platform error", async () => {
    const r = await rigged();
    await r.fake.userSendsFile({ kind: "file", name: "a.pdf", mime: "application/pdf", data: pdf(100) });
    const msg = await nextMessage(r, 0);
    const att = msg.attachments?.[0] as NonNullable<InboundMessage["attachments"]>[number];
    const unknown = { ...att, source: { ...att.source, file_key: "file_v3_nope" } };
    await expect(r.channel.download(msg, unknown, MB)).rejects.toBeInstanceOf(PlatformNotFoundError);
    const wrongType = { ...att, source: { ...att.source, type: "image" } };
    const err = await r.channel.download(msg, wrongType, MB).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).message).toMatch(/234001/);
  });

  it("the resource API needs the tenant token", async () => {
    const r = await rigged();
    const sent = await r.fake.userSendsFile({ kind: "file", name: "a.pdf", mime: "application/pdf", data: pdf(100) });
    const msg = await nextMessage(r, 0);
    const key = String(msg.attachments?.[0]?.source.file_key);
    const url = `${r.fake.url}/open-apis/im/v1/messages/${sent.messageId}/resources/${key}?type=file`;
    const bare = await fetch(url);
    expect(bare.status).toBe(400);
    expect(((await bare.json()) as { code: number }).code).toBe(99991661);
    const forged = await fetch(url, { headers: { authorization: "Bearer t-forged" } });
    expect(((await forged.json()) as { code: number }).code).toBe(99991663);
  });
});

describe("feishu media: sendFile", () => {
  it("posts an image and a PDF that users can download with identical bytes, as replies in the p2p chat", async () => {
    const r = await rigged();
    await r.fake.userSays({ text: "send me the chart and the report" });
    const msg = await nextMessage(r, 0);
    const image = png(2048);
    const doc = pdf(40_000);
    const imageHandle = await r.channel.sendFile(msg.ref, { name: "chart.png", mime: "image/png", data: image, kind: "image" });
    const docHandle = await r.channel.sendFile(msg.ref, { name: "report.pdf", mime: "application/pdf", data: doc, kind: "file" });
    const files = r.fake.botFiles(DM_CHAT);
    expect(files.map((f) => f.message.id)).toEqual([imageHandle.id, docHandle.id]);
    expect(files.map((f) => f.message.msgType)).toEqual(["image", "file"]);
    expect(files.map((f) => f.message.parentId)).toEqual([msg.ref.replyToId, msg.ref.replyToId]);
    expect(files[0]?.file.data.equals(Buffer.from(image))).toBe(true);
    expect(files[1]?.file.data.equals(Buffer.from(doc))).toBe(true);
    expect(files[1]?.name).toBe("report.pdf");
    expect(files[1]?.file.fileType).toBe("pdf");
  });

  it("posts into the user's topic in a group", async () => {
    const r = await rigged();
    const d = await r.fake.userSays({ text: "a file please", chatType: "group", mentionBot: true });
    const msg = await nextMessage(r, 0);
    const data = pdf(500);
    await r.channel.sendFile(msg.ref, { name: "a.pdf", mime: "application/pdf", data, kind: "file" });
    const [posted] = r.fake.botFiles(GROUP_CHAT, d.messageId);
    expect(posted?.message.inThread).toBe(true);
    expect(posted?.message.rootId).toBe(d.messageId);
    expect(posted?.file.data.equals(Buffer.from(data))).toBe(true);
  });

  it("sends an image over the 10 MB image limit as a file, and refuses uploads over 30 MB before calling", async () => {
    const r = await rigged();
    await r.fake.userSays({ text: "big ones" });
    const msg = await nextMessage(r, 0);
    expect(r.channel.maxUploadBytes).toBe(30 * MB);
    const big = png(LIMITS.imageBytes + 1);
    await r.channel.sendFile(msg.ref, { name: "big.png", mime: "image/png", data: big, kind: "image" });
    const [posted] = r.fake.botFiles(DM_CHAT);
    expect(posted?.message.msgType).toBe("file");
    expect(posted?.file.data.equals(Buffer.from(big))).toBe(true);
    const uploads = () => r.fake.world.calls.filter((c) => c.op === "file_upload" || c.op === "image_upload").length;
    const before = uploads();
    const huge = new Uint8Array(30 * MB + 1);
    const err = await r.channel
      .sendFile(msg.ref, { name: "huge.zip", mime: "application/zip", data: huge, kind: "file" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect((err as FileTooLargeError).message).toMatch(/31457281 bytes.*31457280/);
    expect(uploads()).toBe(before);
    const empty = await r.channel
      .sendFile(msg.ref, { name: "empty.txt", mime: "text/plain", data: new Uint8Array(0), kind: "file" })
      .catch((e: unknown) => e);
    expect((empty as ChannelError).code).toBe("content_rejected");
  });

  it("the fake refuses what Feishu refuses: a file over 30 MB, an image over 10 MB, an unreadable image", async () => {
    const r = await rigged();
    const client = new lark.Client({
      appId: r.fake.options.appId,
      appSecret: r.fake.options.appSecret,
      domain: r.fake.url,
      cache: new lark.DefaultCache(),
      // The SDK logs every refused call; these are refused on purpose.
      logger: { error() {}, warn() {}, info() {}, debug() {}, trace() {} },
    });
    const refused = async (call: () => Promise<unknown>) => {
      const err = await call().catch((e: unknown) => e);
      return mapFeishuError("feishu", err, "upload") as ChannelError;
    };
    const file = await refused(() =>
      client.im.v1.file.create({ data: { file_type: "stream", file_name: "x.bin", file: Buffer.alloc(LIMITS.fileBytes + 1) } }),
    );
    expect(file.code).toBe("content_rejected");
    expect(file.message).toMatch(/234006/);
    const image = await refused(() =>
      client.im.v1.image.create({ data: { image_type: "message", image: Buffer.from(png(LIMITS.imageBytes + 1)) } }),
    );
    expect(image.message).toMatch(/234006/);
    const text = await refused(() =>
      client.im.v1.image.create({ data: { image_type: "message", image: Buffer.from("not an image") } }),
    );
    expect(text.message).toMatch(/234011/);
    const ok = await client.im.v1.file.create({ data: { file_type: "pdf", file_name: "ok.pdf", file: Buffer.from(pdf(64)) } });
    expect(ok?.file_key).toMatch(/^file_v3_/);
  });
});

describe("feishu media: contract driver", () => {
  for (const mode of ["websocket", "webhook"] as const) {
    it(`userSendsFile reaches the adapter and botFiles shows what sendFile posted (${mode})`, async () => {
      driver = await FeishuDriver.start({ mode });
      const d = driver;
      const r = await startRig({ mode, useFake: d.fake });
      rig = r;
      const photo = png(1500);
      await d.userSendsFile({ kind: "image", name: "shot.png", mime: "image/png", data: photo, caption: "read this" });
      expect(await d.lastDelivery()).toBe("acked");
      const msg = await nextMessage(r, 0);
      expect(msg.ref.chatId).toBe(DM_CHAT);
      expect(msg.text).toBe("read this");
      const got = await r.channel.download(msg, msg.attachments?.[0] as never, MB);
      expect(Buffer.from(got).equals(Buffer.from(photo))).toBe(true);

      await d.userSendsFile({ kind: "audio", name: "v.ogg", mime: "audio/ogg", data: new Uint8Array(randomBytes(700)) });
      const voice = await nextMessage(r, 1);
      expect(voice.attachments?.map((a) => a.kind)).toEqual(["audio"]);

      const answer = pdf(900);
      const image = png(800);
      await r.channel.sendFile(msg.ref, { name: "answer.pdf", mime: "application/pdf", data: answer, kind: "file" });
      await r.channel.sendFile(msg.ref, { name: "plot.png", mime: "image/png", data: image, kind: "image" });
      const files = d.botFiles();
      expect(files.map((f) => [f.name, f.kind])).toEqual([
        ["answer.pdf", "file"],
        ["image.png", "image"],
      ]);
      expect(Buffer.from(files[0]?.data ?? []).equals(Buffer.from(answer))).toBe(true);
      expect(Buffer.from(files[1]?.data ?? []).equals(Buffer.from(image))).toBe(true);
    });
  }
});
