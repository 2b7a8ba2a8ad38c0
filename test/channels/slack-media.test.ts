/**
 * Slack files through the adapter, with real Bolt and the real web client against the fake
 * Slack: shared photos, documents and voice clips arrive as attachments and download with the
 * bot token; sendFile is upload v2 into the reply thread; limits hold on both sides.
 */
import { randomBytes } from "node:crypto";
import { webApi } from "@slack/bolt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { attachmentsOf } from "../../src/channels/slack/attachments.js";
import { SLACK_MAX_UPLOAD_BYTES, SlackFiles } from "../../src/channels/slack/files.js";
import { mapSlackError } from "../../src/channels/slack/map-error.js";
import type { ConversationRef, InboundMessage } from "../../src/channels/types.js";
import { ChannelError, FileTooLargeError, PlatformNotFoundError } from "../../src/errors.js";
import { SlackDriver } from "../fakes/slack/driver.js";
import { FakeSlack, SLACK_FILE_MAX_BYTES } from "../fakes/slack/index.js";
import { type AdapterRig, adapterRig } from "../fakes/slack/rig.js";

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

const bytes = (n: number) => new Uint8Array(randomBytes(n));
const only = (inbox: InboundMessage[]): InboundMessage => {
  expect(inbox).toHaveLength(1);
  return inbox[0]!;
};
const dmRef: ConversationRef = { channel: "slack", key: "slack:T0001:D0001", chatId: "D0001", chatType: "direct" };

describe("slack files: inbound", () => {
  it("a photo with a caption in a DM arrives as the caption plus one image, and downloads byte for byte", async () => {
    const data = bytes(40_000);
    await fake.shareFile({ name: "screenshot.png", mime: "image/png", data }, { channel: "D0001", caption: "what is this?" });
    const msg = only(rig.inbox);
    expect(msg.text).toBe("what is this?");
    expect(msg.mentioned).toBe(true);
    expect(msg.attachments).toHaveLength(1);
    const att = msg.attachments![0]!;
    expect(att).toMatchObject({ kind: "image", name: "screenshot.png", mime: "image/png", size: data.byteLength });
    expect(typeof att.source.id).toBe("string");
    const got = await rig.channel.download(msg, att, 1_000_000);
    expect(Buffer.from(got).equals(Buffer.from(data))).toBe(true);
    expect(fake.files.downloads.at(-1)).toMatchObject({ id: att.source.id, authorized: true });
  });

  it("a file-only mention opens a thread with text '' and is delivered once (its message twin dropped)", async () => {
    const data = bytes(1000);
    const ts = await fake.shareFile({ name: "chart.jpg", mime: "image/jpeg", data }, { mention: true });
    const msg = only(rig.inbox);
    expect(msg).toMatchObject({ text: "", mentioned: true, ref: { chatId: "C0001", threadId: ts, chatType: "group" } });
    expect(msg.attachments?.map((a) => a.kind)).toEqual(["image"]);
    expect(fake.deliveries).toHaveLength(2);
    expect(Buffer.from(await rig.channel.download(msg, msg.attachments![0]!, 1000)).equals(Buffer.from(data))).toBe(true);
  });

  it("a document in the bot's thread arrives as a file with its name and type, without a mention", async () => {
    const thread = await fake.mention("let me send you the report");
    const data = bytes(70_000);
    await fake.shareFile({ name: "Q3 report.pdf", mime: "application/pdf", data }, { threadTs: thread });
    expect(rig.inbox).toHaveLength(2);
    const msg = rig.inbox[1]!;
    expect(msg).toMatchObject({ text: "", mentioned: true, ref: { threadId: thread } });
    const att = msg.attachments![0]!;
    expect(att).toMatchObject({ kind: "file", name: "Q3 report.pdf", mime: "application/pdf", size: 70_000 });
    expect(Buffer.from(await rig.channel.download(msg, att, 70_000)).equals(Buffer.from(data))).toBe(true);
  });

  it("a voice clip arrives as audio and downloads", async () => {
    const data = bytes(12_345);
    await fake.shareFile({ name: "audio_message.webm", mime: "audio/webm", data, voice: true }, { channel: "D0001" });
    const msg = only(rig.inbox);
    expect(msg.text).toBe("");
    const att = msg.attachments![0]!;
    expect(att).toMatchObject({ kind: "audio", name: "audio_message.webm", mime: "audio/webm" });
    expect(Buffer.from(await rig.channel.download(msg, att, 20_000)).equals(Buffer.from(data))).toBe(true);
  });

  it("keeps the mention rule: a file at the top level of a channel without a mention is reported unaddressed", async () => {
    await fake.shareFile({ name: "notes.txt", mime: "text/plain", data: bytes(10) }, { caption: "for the team" });
    const msg = only(rig.inbox);
    expect(msg).toMatchObject({ text: "for the team", mentioned: false });
    expect(msg.attachments?.[0]).toMatchObject({ kind: "file", name: "notes.txt" });
  });
});

describe("slack files: translation of file objects", () => {
  it("makes up names, reads voice clips by subtype, and leaves out files it cannot fetch", () => {
    const atts = attachmentsOf([
      { id: "F1", mimetype: "image/jpeg", filetype: "jpg", url_private_download: "https://files.slack.com/a" },
      { id: "F2", mimetype: "video/webm", subtype: "slack_audio", url_private: "https://files.slack.com/b" },
      { id: "F3", mimetype: "application/zip", url_private: "https://files.slack.com/c" },
      { id: "F4", mode: "tombstone" },
      { id: "F5", mode: "external", is_external: true, url_private: "https://docs.example.com/x" },
      { id: "F6", name: "big.bin", file_access: "check_file_info" },
    ]);
    expect(atts.map((a) => [a.kind, a.name])).toEqual([
      ["image", "photo.jpg"],
      ["audio", "voice.webm"],
      ["file", "file.bin"],
      ["file", "big.bin"],
    ]);
    expect(atts[0]!.source).toEqual({ id: "F1", url: "https://files.slack.com/a" });
    expect(atts[1]!.source).toEqual({ id: "F2", url: "https://files.slack.com/b" });
    expect(atts[3]!.source).toEqual({ id: "F6" });
  });
});

describe("slack files: download limits and refusals", () => {
  async function shared(size: number): Promise<InboundMessage> {
    await fake.shareFile({ name: "data.csv", mime: "text/csv", data: bytes(size) }, { channel: "D0001" });
    return rig.inbox.at(-1)!;
  }

  it("refuses a file whose stated size is over the limit without requesting it", async () => {
    const msg = await shared(5000);
    const err = await rig.channel.download(msg, msg.attachments![0]!, 4999).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect((err as FileTooLargeError).size).toBe(5000);
    expect(fake.files.downloads).toHaveLength(0);
  });

  it("stops at the limit when the size is not known up front, with or without a Content-Length", async () => {
    const msg = await shared(200_000);
    const { size: _size, ...unsized } = msg.attachments![0]!;
    await expect(rig.channel.download(msg, unsized, 100_000)).rejects.toBeInstanceOf(FileTooLargeError);
    fake.files.omitContentLength = true;
    await expect(rig.channel.download(msg, unsized, 100_000)).rejects.toBeInstanceOf(FileTooLargeError);
    expect(fake.files.downloads).toHaveLength(2);
    const whole = await rig.channel.download(msg, unsized, 200_000);
    expect(whole.byteLength).toBe(200_000);
  });

  it("serves the sign-in page, not the file, without the bot token, and the adapter reports that", async () => {
    const msg = await shared(300);
    const url = String(msg.attachments![0]!.source.url);
    const res = await fetch(url);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(/Sign in/);
    const web = new webApi.WebClient("xoxb-not-this-bot", { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    const files = new SlackFiles({
      channel: "slack",
      web,
      botToken: "xoxb-not-this-bot",
      apiBase: fake.apiUrl,
      call: (_m, run) => run(),
    });
    const err = await files.download(msg.attachments![0]!, 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).code).toBe("forbidden");
  });

  it("asks files.info when the event gave only an id, and maps an unknown id to not found", async () => {
    const msg = await shared(2048);
    const att = msg.attachments![0]!;
    const got = await rig.channel.download(msg, { ...att, source: { id: att.source.id! } }, 4096);
    expect(got.byteLength).toBe(2048);
    expect(fake.calls("files.info")).toHaveLength(1);
    const missing = { kind: "file" as const, name: "gone.txt", source: { id: "F99999999" } };
    await expect(rig.channel.download(msg, missing, 4096)).rejects.toBeInstanceOf(PlatformNotFoundError);
  });

  it("does not send the bot token to a host that is not Slack", async () => {
    const msg = await shared(10);
    const elsewhere = { kind: "file" as const, name: "x", source: { id: "F1", url: "https://example.com/file" } };
    const err = await rig.channel.download(msg, elsewhere, 100).catch((e: unknown) => e);
    expect((err as ChannelError).code).toBe("not_supported");
  });
});

describe("slack files: sendFile", () => {
  it("uploads an image into the thread replies go to, with identical bytes", async () => {
    const thread = await fake.mention("draw me a chart");
    const ref = rig.inbox[0]!.ref;
    const data = bytes(90_000);
    const handle = await rig.channel.sendFile(ref, { name: "chart.png", mime: "image/png", data, kind: "image" });
    const shown = fake.botFiles("C0001", thread);
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatchObject({ id: handle.id, name: "chart.png", mimetype: "image/png", threadId: thread });
    expect(Buffer.from(shown[0]!.data).equals(Buffer.from(data))).toBe(true);
    expect(fake.calls("files.completeUploadExternal")[0]).toMatchObject({ channel_id: "C0001", thread_ts: thread });
    // A member downloads it from Slack.
    const file = fake.files.files.find((f) => f.id === handle.id)!;
    const url = String(fake.files.describe(file).url_private_download);
    const res = await fetch(url, { headers: { authorization: `Bearer ${fake.botToken}` } });
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(data))).toBe(true);
  });

  it("uploads a PDF at the top level of a DM, and nowhere else", async () => {
    const data = bytes(5000);
    await rig.channel.sendFile(dmRef, { name: "invoice.pdf", mime: "application/pdf", data, kind: "file" });
    const shown = fake.botFiles("D0001");
    expect(shown).toHaveLength(1);
    expect(shown[0]!.threadId).toBeUndefined();
    expect(shown[0]!.mimetype).toBe("application/pdf");
    expect(Buffer.from(shown[0]!.data).equals(Buffer.from(data))).toBe(true);
    expect(fake.botFiles("C0001")).toHaveLength(0);
    expect(rig.channel.maxUploadBytes).toBe(SLACK_MAX_UPLOAD_BYTES);
  });

  it("refuses a file over Slack's limit before any call", async () => {
    // A gigabyte is not allocated: the adapter refuses on the length alone, before reading a byte.
    const huge = Object.defineProperty(new Uint8Array(1), "byteLength", { value: SLACK_MAX_UPLOAD_BYTES + 1 });
    const err = await rig.channel
      .sendFile(dmRef, { name: "huge.bin", mime: "application/octet-stream", data: huge, kind: "file" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect((err as FileTooLargeError).maxBytes).toBe(1_000_000_000);
    expect((err as Error).message).toMatch(/1000000001 bytes.*limit of 1000000000 bytes/);
    expect(fake.calls("files.getUploadURLExternal")).toHaveLength(0);
  });

  it("the fake refuses what Slack refuses: a declared length over the limit, extra bytes, an unknown file id", async () => {
    const web = new webApi.WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    const tooBig = await web.files
      .getUploadURLExternal({ filename: "big.bin", length: SLACK_FILE_MAX_BYTES + 1 })
      .catch((e: unknown) => e);
    expect(mapSlackError("slack", tooBig, "files.upload")).toMatchObject({ code: "content_rejected" });
    const { upload_url } = await web.files.getUploadURLExternal({ filename: "small.bin", length: 10 });
    const extra = await fetch(upload_url!, { method: "POST", body: bytes(200_000) });
    expect(extra.status).toBe(413);
    const unknown = await web.files.completeUploadExternal({ files: [{ id: "F77777777" }], channel_id: "D0001" }).catch((e) => e);
    expect(mapSlackError("slack", unknown, "files.upload")).toBeInstanceOf(PlatformNotFoundError);
    const anonymous = new webApi.WebClient(undefined, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    const noAuth = await anonymous.files.getUploadURLExternal({ filename: "a.txt", length: 1 }).catch((e: unknown) => e);
    expect(mapSlackError("slack", noAuth, "files.upload")).toMatchObject({ code: "auth_failed" });
  });
});

describe("slack files: the contract driver", () => {
  for (const conversation of ["dm", "thread"] as const) {
    it(`userSendsFile and botFiles work in the ${conversation} test conversation`, async () => {
      const driver = await SlackDriver.start({ mode: "webhook", conversation });
      const own = await adapterRig(driver.fake);
      try {
        await own.start();
        const photo = bytes(3000);
        await driver.userSendsFile({ kind: "image", name: "cat.png", mime: "image/png", data: photo, caption: "look" });
        expect(await driver.lastDelivery()).toBe("acked");
        const msg = only(own.inbox);
        expect(msg.text).toBe("look");
        expect(msg.attachments?.[0]).toMatchObject({ kind: "image", name: "cat.png" });
        await driver.userSendsFile({ kind: "audio", name: "voice.webm", mime: "audio/webm", data: bytes(800) });
        expect(own.inbox).toHaveLength(2);
        expect(own.inbox[1]!.attachments?.[0]?.kind).toBe("audio");
        expect(own.inbox[1]!.ref.key).toBe(msg.ref.key);
        const back = await own.channel.download(msg, msg.attachments![0]!, 10_000);
        expect(driver.botFiles()).toEqual([]);
        await own.channel.sendFile(msg.ref, { name: "cat-edited.png", mime: "image/png", data: back, kind: "image" });
        await own.channel.sendFile(msg.ref, { name: "notes.pdf", mime: "application/pdf", data: bytes(100), kind: "file" });
        const files = driver.botFiles();
        expect(files.map((f) => [f.name, f.kind])).toEqual([
          ["cat-edited.png", "image"],
          ["notes.pdf", "file"],
        ]);
        expect(Buffer.from(files[0]!.data).equals(Buffer.from(photo))).toBe(true);
      } finally {
        await own.stop();
        await driver.close();
      }
    });
  }
});
