/**
 * DingTalk files, images and voice at adapter level, against the fake DingTalk: what users send
 * arrives as attachments that `download` reads through messageFiles/download, `sendFile` uploads
 * through media/upload and posts the media_id, and the limits hold on both sides.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { attachmentsOf } from "../../src/channels/dingtalk/attachments.js";
import { DingTalkChannel } from "../../src/channels/dingtalk/index.js";
import type { InboundAttachment, InboundMessage } from "../../src/channels/types.js";
import { ChannelError, FileTooLargeError } from "../../src/errors.js";
import { silentLogger } from "../../src/log/logger.js";
import { HttpServer } from "../../src/server/http.js";
import { dingTalkDriver } from "../fakes/dingtalk/driver.js";
import { UPLOAD_LIMITS } from "../fakes/dingtalk/files.js";
import { ALICE, type FakeDingTalk } from "../fakes/dingtalk/index.js";
import { type Rig, startRig, until } from "../fakes/dingtalk/rig.js";

const GROUP = "cid-group-1";
const MB = 1024 * 1024;

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** Random bytes behind a real PNG signature, so a byte-for-byte match means the right file. */
function png(size = 3000): Uint8Array {
  const out = new Uint8Array(size);
  out.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  out.set(randomBytes(size - 8), 8);
  return out;
}

function pdf(size = 5000): Uint8Array {
  const out = new Uint8Array(randomBytes(size));
  out.set(new TextEncoder().encode("%PDF-1.7\n"));
  return out;
}

async function nextMessage(r: Rig, count: number): Promise<InboundMessage> {
  return until(() => r.inbox[count - 1], `message ${count}`);
}

function only(msg: InboundMessage): InboundAttachment {
  expect(msg.attachments).toHaveLength(1);
  return msg.attachments?.[0] as InboundAttachment;
}

/** A group message's ref, as the adapter built it, for sending into the group. */
async function groupRef(r: Rig) {
  await r.fake.userSays("hello", { group: GROUP });
  return (await nextMessage(r, r.inbox.length + 1)).ref;
}

function uploads(fake: FakeDingTalk) {
  return fake.calls.filter((c) => c.api === "media.upload").map((c) => c.body as { type: string });
}

describe("dingtalk inbound files", () => {
  it("a photo with a caption arrives as its caption plus one image, and downloads byte for byte", async () => {
    rig = await startRig();
    const data = png();
    await rig.fake.userSendsFile({ kind: "image", name: "screen.png", mime: "image/png", data, caption: "what is this?" });
    const msg = await nextMessage(rig, 1);
    expect(msg.text).toBe("what is this?");
    const att = only(msg);
    expect(att).toMatchObject({ kind: "image", source: { msgtype: "richText" } });
    expect(await rig.channel.download(msg, att, 1 * MB)).toEqual(data);
  });

  it("a photo alone in a group reaches the core with empty text, mentioned, and downloads", async () => {
    rig = await startRig({ session_scope: "chat" });
    const data = png(1200);
    await rig.fake.userSendsFile({ kind: "image", name: "x.png", mime: "image/png", data }, { group: GROUP });
    await rig.fake.userSendsFile({ kind: "image", name: "y.png", mime: "image/png", data }, { group: GROUP, mention: false });
    await rig.fake.userSays("after", { group: GROUP });
    const msg = await nextMessage(rig, 1);
    expect(msg).toMatchObject({ text: "", mentioned: true, ref: { chatType: "group", chatId: GROUP } });
    expect(only(msg)).toMatchObject({ kind: "image", name: "photo.jpg", source: { msgtype: "picture" } });
    expect(await rig.channel.download(msg, only(msg), MB)).toEqual(data);
    // The unmentioned picture never came: DingTalk delivers only messages that @mention the robot.
    expect((await nextMessage(rig, 2)).text).toBe("after");
    expect(rig.inbox).toHaveLength(2);
  });

  it("a document arrives as a file with its name (DingTalk states no MIME type or size), and downloads", async () => {
    rig = await startRig();
    const data = pdf();
    await rig.fake.userSendsFile({ kind: "file", name: "Q3 report.pdf", mime: "application/pdf", data });
    const msg = await nextMessage(rig, 1);
    expect(msg.text).toBe("");
    const att = only(msg);
    expect(att).toMatchObject({ kind: "file", name: "Q3 report.pdf", source: { msgtype: "file" } });
    expect(att.mime).toBeUndefined();
    expect(att.size).toBeUndefined();
    expect(await rig.channel.download(msg, att, MB)).toEqual(data);
  });

  it("a voice note arrives as audio with DingTalk's transcript in its source, and downloads", async () => {
    rig = await startRig();
    const data = new Uint8Array(randomBytes(4000));
    const recognition = "please summarise the report";
    await rig.fake.userSendsFile({ kind: "audio", name: "v.amr", mime: "audio/amr", data, recognition, durationMs: 4200 });
    const msg = await nextMessage(rig, 1);
    expect(msg.text).toBe("");
    const att = only(msg);
    expect(att).toMatchObject({ kind: "audio", name: "voice.amr", source: { msgtype: "audio", recognition, duration: 4200 } });
    expect(await rig.channel.download(msg, att, MB)).toEqual(data);
  });

  it("a video arrives as a file", async () => {
    rig = await startRig();
    const data = new Uint8Array(randomBytes(2048));
    await rig.fake.userSendsFile({ kind: "video", name: "clip.mp4", mime: "video/mp4", data });
    const att = only(await nextMessage(rig, 1));
    expect(att).toMatchObject({ kind: "file", name: "video.mp4", mime: "video/mp4", source: { msgtype: "video" } });
    expect(await rig.channel.download(rig.inbox[0] as InboundMessage, att, MB)).toEqual(data);
  });

  it("reads every picture of rich text and names them apart; parts without a downloadCode are left out", () => {
    const atts = attachmentsOf("richText", {
      richText: [
        { text: "two shots" },
        { type: "picture", downloadCode: "a" },
        { type: "picture", pictureDownloadCode: "only-old-code" },
        { type: "picture", downloadCode: "b" },
      ],
    });
    expect(atts.map((a) => [a.name, a.source.downloadCode])).toEqual([
      ["photo.jpg", "a"],
      ["photo-2.jpg", "b"],
    ]);
    expect(attachmentsOf("file", { fileName: "no-code.pdf" })).toEqual([]);
    expect(attachmentsOf("file", { downloadCode: "c", fileName: "memo.mp3" })[0]).toMatchObject({
      kind: "audio",
      name: "memo.mp3",
    });
  });
});

describe("dingtalk download limits", () => {
  it("throws FileTooLargeError past maxBytes, whether or not the file URL states a length", async () => {
    rig = await startRig();
    const data = pdf(10_000);
    await rig.fake.userSendsFile({ kind: "file", name: "big.pdf", mime: "application/pdf", data });
    const msg = await nextMessage(rig, 1);
    const att = only(msg);
    await expect(rig.channel.download(msg, att, 9_999)).rejects.toBeInstanceOf(FileTooLargeError);
    rig.fake.files.chunked = true;
    const err = await rig.channel.download(msg, att, 4_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect((err as FileTooLargeError).maxBytes).toBe(4_000);
    // Exactly at the limit is fine, chunked or not.
    expect(await rig.channel.download(msg, att, 10_000)).toEqual(data);
    expect(rig.channel.status().lastError ?? null).toBeNull();
  });

  it("does not even ask DingTalk when the attachment's size is known and over the limit", async () => {
    rig = await startRig();
    await rig.fake.userSendsFile({ kind: "file", name: "a.pdf", mime: "application/pdf", data: pdf(3000) });
    const msg = await nextMessage(rig, 1);
    const sized = { ...only(msg), size: 3000 };
    await expect(rig.channel.download(msg, sized, 2999)).rejects.toBeInstanceOf(FileTooLargeError);
    expect(rig.fake.calls.filter((c) => c.api === "robot.download")).toHaveLength(0);
    expect(rig.fake.files.fetched).toHaveLength(0);
    expect((await rig.channel.download(msg, sized, 3000)).byteLength).toBe(3000);
  });

  it("an unknown downloadCode fails with the platform's error, not a file", async () => {
    rig = await startRig();
    await rig.fake.userSendsFile({ kind: "file", name: "a.pdf", mime: "application/pdf", data: pdf(100) });
    const msg = await nextMessage(rig, 1);
    const forged = { ...only(msg), source: { msgtype: "file", downloadCode: "dlc-never-issued" } };
    const err = await rig.channel.download(msg, forged, MB).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).message).toMatch(/messageFiles\/download failed: 400 InvalidParameter/);
  });
});

describe("dingtalk sendFile", () => {
  it("posts an image in the DM and a PDF in the group, each downloadable with identical bytes", async () => {
    rig = await startRig({ session_scope: "chat" });
    await rig.fake.userSays("hi");
    const dmRef = (await nextMessage(rig, 1)).ref;
    const group = await groupRef(rig);
    const image = png(4096);
    const doc = pdf(8192);
    const h1 = await rig.channel.sendFile(dmRef, { name: "chart.png", mime: "image/png", data: image, kind: "image" });
    const h2 = await rig.channel.sendFile(group, { name: "summary.pdf", mime: "application/pdf", data: doc, kind: "file" });
    expect(h1.ref).toBe(dmRef);
    expect(h2.id).toMatch(/^pqk-/);
    const [dmFile] = rig.fake.filesIn(rig.fake.dmId(ALICE));
    const [groupFile] = rig.fake.filesIn(GROUP);
    expect(rig.fake.files.media.size).toBe(2);
    expect(dmFile).toMatchObject({ kind: "image", name: "chart.png" });
    expect(groupFile).toMatchObject({ kind: "file", name: "summary.pdf" });
    expect(rig.fake.filesIn(rig.fake.dmId(ALICE))).toHaveLength(1);
    for (const [file, bytes] of [
      [dmFile, image],
      [groupFile, doc],
    ] as const) {
      const res = await fetch(file?.url as string);
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
    }
    expect(uploads(rig.fake).map((u) => u.type)).toEqual(["image", "file"]);
    const sends = rig.fake.calls.filter((c) => c.api.startsWith("robot.") && c.api !== "robot.download");
    expect(sends.map((c) => [c.api, (c.body as { msgKey: string }).msgKey])).toEqual([
      ["robot.dm", "sampleImageMsg"],
      ["robot.group", "sampleFile"],
    ]);
    expect(JSON.parse((sends[1]?.body as { msgParam?: string } | undefined)?.msgParam ?? "{}")).toMatchObject({
      fileName: "summary.pdf",
      fileType: "pdf",
    });
  });

  it("sends an image format DingTalk's image upload refuses (webp) as a file", async () => {
    rig = await startRig();
    await rig.fake.userSays("hi");
    const ref = (await nextMessage(rig, 1)).ref;
    const data = new Uint8Array(randomBytes(500));
    await rig.channel.sendFile(ref, { name: "pic.webp", mime: "image/webp", data, kind: "image" });
    expect(uploads(rig.fake).map((u) => u.type)).toEqual(["file"]);
    expect(rig.fake.filesIn(rig.fake.dmId())[0]).toMatchObject({ kind: "file", name: "pic.webp", data });
  });

  it("refuses a file over 20 MB before uploading, with a FileTooLargeError naming the limit", async () => {
    rig = await startRig();
    await rig.fake.userSays("hi");
    const ref = (await nextMessage(rig, 1)).ref;
    expect(rig.channel.maxUploadBytes).toBe(20 * MB);
    const data = new Uint8Array(20 * MB + 1);
    const err = await rig.channel
      .sendFile(ref, { name: "huge.pdf", mime: "application/pdf", data, kind: "file" })
      .catch((e) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect(err).toMatchObject({ channel: "dingtalk", maxBytes: 20 * MB, size: 20 * MB + 1 });
    expect(uploads(rig.fake)).toHaveLength(0);
    expect(rig.fake.filesIn(rig.fake.dmId())).toHaveLength(0);
  });

  it("uploads with a fresh token when DingTalk rejected the cached one (errcode 40014)", async () => {
    rig = await startRig();
    await rig.fake.userSays("hi");
    const ref = (await nextMessage(rig, 1)).ref;
    await rig.channel.sendFile(ref, { name: "a.png", mime: "image/png", data: png(100), kind: "image" });
    rig.fake.api.expireTokens();
    await rig.channel.sendFile(ref, { name: "b.png", mime: "image/png", data: png(100), kind: "image" });
    expect(uploads(rig.fake)).toHaveLength(3);
    expect(rig.fake.calls.filter((c) => c.api === "media.upload").map((c) => c.status)).toEqual([200, 200, 200]);
    expect(rig.fake.filesIn(rig.fake.dmId()).map((f) => f.name)).toEqual(["a.png", "b.png"]);
  });

  it("a DM partner without a staff id cannot be sent a file (the robot API needs one)", async () => {
    rig = await startRig();
    await rig.fake.userSays("hi");
    const ref = (await nextMessage(rig, 1)).ref;
    const noStaff = { ...ref, extra: { ...ref.extra, staffId: "" } };
    const err = await rig.channel
      .sendFile(noStaff, { name: "a.png", mime: "image/png", data: png(100), kind: "image" })
      .catch((e) => e);
    expect(err).toMatchObject({ code: "not_supported" });
  });
});

describe("fake dingtalk file endpoints", () => {
  async function upload(fake: FakeDingTalk, type: string, name: string, size: number, token?: string) {
    const form = new FormData();
    form.append("media", new Blob([new Uint8Array(size)]), name);
    const query = new URLSearchParams({ type, ...(token ? { access_token: token } : {}) });
    const res = await fetch(`${fake.url}/media/upload?${query}`, { method: "POST", body: form });
    return (await res.json()) as { errcode: number; media_id?: string };
  }

  async function token(fake: FakeDingTalk): Promise<string> {
    const res = await fetch(`${fake.url}/v1.0/oauth2/accessToken`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ appKey: fake.clientId, appSecret: fake.clientSecret }),
    });
    return ((await res.json()) as { accessToken: string }).accessToken;
  }

  it("media/upload takes DingTalk's limits and formats, and wants a token", async () => {
    rig = await startRig();
    const fake = rig.fake;
    const t = await token(fake);
    expect(await upload(fake, "file", "a.pdf", 10)).toMatchObject({ errcode: 40014 });
    expect(await upload(fake, "file", "a.pdf", UPLOAD_LIMITS.file, t)).toMatchObject({ errcode: 0 });
    expect(await upload(fake, "file", "a.pdf", UPLOAD_LIMITS.file + 1, t)).toMatchObject({ errcode: 40006 });
    expect(await upload(fake, "image", "a.png", UPLOAD_LIMITS.image + 1, t)).toMatchObject({ errcode: 40006 });
    expect(await upload(fake, "voice", "a.amr", UPLOAD_LIMITS.voice + 1, t)).toMatchObject({ errcode: 40006 });
    expect(await upload(fake, "image", "a.webp", 10, t)).toMatchObject({ errcode: 40005 });
    expect(await upload(fake, "sticker", "a.png", 10, t)).toMatchObject({ errcode: 40004 });
  });

  it("messageFiles/download wants a token and the app's robotCode", async () => {
    rig = await startRig();
    const fake = rig.fake;
    const code = fake.files.store({ name: "a.txt", mime: "text/plain", data: new Uint8Array([1, 2, 3]) });
    const ask = async (headers: Record<string, string>, robotCode: string) => {
      const res = await fetch(`${fake.url}/v1.0/robot/messageFiles/download`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ downloadCode: code, robotCode }),
      });
      return { status: res.status, body: (await res.json()) as { downloadUrl?: string } };
    };
    expect((await ask({}, fake.robotCode)).status).toBe(401);
    const auth = { "x-acs-dingtalk-access-token": await token(fake) };
    expect((await ask(auth, "someone-else")).status).toBe(400);
    const ok = await ask(auth, fake.robotCode);
    expect(ok.status).toBe(200);
    const res = await fetch(ok.body.downloadUrl as string);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
    expect((await fetch(`${fake.url}/files/not-issued`)).status).toBe(404);
  });
});

describe("dingtalk contract driver: files", () => {
  it("userSendsFile reaches the adapter in the userSays DM, and botFiles shows what sendFile posted", async () => {
    const driver = await dingTalkDriver({ mode: "stream", cards: false, scope: "chat" });
    const logger = silentLogger();
    const http = new HttpServer({ host: "127.0.0.1", port: 0, logger });
    const { port } = await http.listen();
    // `enabled` is read by the core's registry, not by the channel's own schema.
    const { enabled: _, ...config } = driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` });
    const channel = new DingTalkChannel({
      name: "dingtalk",
      config: config as never,
      logger,
      http: http.mount("dingtalk"),
      baseDir: ".",
    });
    const inbox: InboundMessage[] = [];
    try {
      await channel.start(async (m) => void inbox.push(m));
      const photo = png(2500);
      await driver.userSendsFile?.({ kind: "image", name: "p.png", mime: "image/png", data: photo, caption: "look" });
      await driver.userSays("plain text");
      const msg = await until(() => inbox[0], "the photo");
      await until(() => inbox[1], "the text");
      expect(msg.ref.key).toBe(inbox[1]?.ref.key);
      expect(msg.text).toBe("look");
      expect(await channel.download(msg, only(msg), MB)).toEqual(photo);
      expect(driver.botFiles?.()).toEqual([]);
      const doc = pdf(3000);
      await channel.sendFile(msg.ref, { name: "answer.pdf", mime: "application/pdf", data: doc, kind: "file" });
      await channel.sendFile(msg.ref, { name: "plot.png", mime: "image/png", data: photo, kind: "image" });
      expect(driver.botFiles?.()).toEqual([
        { name: "answer.pdf", data: doc, kind: "file" },
        { name: "plot.png", data: photo, kind: "image" },
      ]);
    } finally {
      await channel.stop();
      await http.close();
      await driver.close();
    }
  });
});
