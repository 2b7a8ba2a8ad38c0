/**
 * The contract's media part: files, images and voice from the user to the agent, and a file from
 * the agent back to the user. Runs where the driver can send files (`userSendsFile`); the suite's
 * gateway marks the mock model as reading images, sends voice to the mock's transcription
 * endpoint, and takes files of up to 1 MiB. A driver whose platform sends documents without text
 * (`fileCaptions: false`) sends them without a caption.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { eventually, sleep } from "../gateway.js";
import { contentText, lastUserImages, lastUserText } from "../mock-model.js";
import type { ContractContext } from "./shared.js";
import { withText } from "./shared.js";

/** The largest file the contract's gateway takes (`media.max_file_mb`). */
export const CONTRACT_MAX_FILE_MB = 1;

/** A 1×1 PNG. */
export const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

/** A one-page PDF whose text is "Quarterly numbers are up". */
export const PDF = Buffer.from(
  [
    "%PDF-1.4",
    "1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj",
    "2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj",
    "3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 144]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj",
    "4 0 obj<</Length 53>>stream",
    "BT /F1 18 Tf 20 100 Td (Quarterly numbers are up) Tj ET",
    "endstream endobj",
    "5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj",
    "trailer<</Root 1 0 R>>",
    "%%EOF",
  ].join("\n"),
  "latin1",
);

/** Files stored for every thread of the test's gateway. */
function storedFiles(ctx: ContractContext): string[] {
  const root = path.join(ctx.dir, "files");
  try {
    return readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/** A test's context with the driver's `userSendsFile`. */
type Ready = ContractContext & { send: NonNullable<ContractContext["driver"]["userSendsFile"]> };
/** The test's context, or a skip (with the reason) where files cannot be tested. */
type ReadyOrSkip = (skip: (note: string) => never) => Ready;

export function mediaContract(current: () => ContractContext): void {
  describe("files, images and voice", () => {
    const ready: ReadyOrSkip = (skip) => {
      const ctx = current();
      const send = ctx.driver.userSendsFile?.bind(ctx.driver);
      if (!send) return skip("the driver cannot send files (no userSendsFile)");
      if (ctx.noApprovals) return skip(`${ctx.noApprovals}: read_file, send_file and the mock model are Antler's agent's`);
      return { ...ctx, send };
    };
    userFileTests(ready);
    agentFileAndLimitTests(ready);
  });
}

/** What the user sends reaches the model: a photo as an image, a PDF through read_file, a voice note as text. */
function userFileTests(ready: ReadyOrSkip): void {
  it("a captioned photo reaches the model as an image block plus the caption", async ({ skip }) => {
    const { driver, model, send } = ready(skip);
    model.enqueue({ text: "A tiny picture." });
    await send({ kind: "image", name: "pixel.png", mime: "image/png", data: PNG, caption: "what is in this picture?" });
    await eventually(withText(driver, "A tiny picture."), 15_000, "the reply");
    const request = model.requests.at(-1)!;
    expect(lastUserText(request)).toContain("what is in this picture?");
    const images = lastUserImages(request);
    expect(images).toHaveLength(1);
    expect(images[0]).toMatch(/^data:image\/[\w.+-]+;base64,/);
    expect(Buffer.from(images[0]!.split(",")[1]!, "base64").equals(PNG)).toBe(true);
  });

  it("a PDF can be read with read_file", async ({ skip }) => {
    const { driver, model, send } = ready(skip);
    const captions = driver.fileCaptions !== false;
    model.enqueue({ toolCalls: [{ name: "read_file", args: { name: "report.pdf" } }] }, { text: "The numbers are up." });
    const caption = captions ? { caption: "summarize this" } : {};
    await send({ kind: "file", name: "report.pdf", mime: "application/pdf", data: PDF, ...caption });
    await eventually(withText(driver, "The numbers are up."), 15_000, "the reply");
    const first = model.requests.at(-2)!;
    if (captions) expect(lastUserText(first)).toContain("summarize this");
    expect(lastUserText(first)).toContain("report.pdf");
    const toolResult = model.requests
      .at(-1)!
      .messages.filter((m) => m.role === "tool")
      .at(-1);
    expect(contentText(toolResult?.content)).toContain("Quarterly numbers are up");
  });

  it("a voice note arrives as its transcript", async ({ skip }) => {
    const { driver, model, send } = ready(skip);
    const voice = Buffer.from("OggS-voice-note-bytes-for-the-test");
    model.setTranscript("please book a table for two");
    model.enqueue({ text: "Booked." });
    await send({ kind: "audio", name: "voice.ogg", mime: "audio/ogg", data: voice });
    await eventually(withText(driver, "Booked."), 15_000, "the reply");
    expect(lastUserText(model.requests.at(-1)!)).toContain("please book a table for two");
    expect(model.transcriptions).toHaveLength(1);
    expect(Buffer.from(model.transcriptions[0]!.data).equals(voice)).toBe(true);
  });
}

/** A file from the agent back to the user, and a file over the limit. */
function agentFileAndLimitTests(ready: ReadyOrSkip): void {
  it("send_file delivers a file that the user can download", async ({ skip }) => {
    const { driver, model, send } = ready(skip);
    const files = driver.botFiles?.bind(driver);
    if (!files) throw new Error("the driver cannot list the bot's files");
    const notes = Buffer.from("Agenda\n1. Budget\n2. Hiring\n");
    model.enqueue({ toolCalls: [{ name: "send_file", args: { name: "notes.txt" } }] }, { text: "Here is your file back." });
    const caption = driver.fileCaptions !== false ? { caption: "send this back to me" } : {};
    await send({ kind: "file", name: "notes.txt", mime: "text/plain", data: notes, ...caption });
    await eventually(withText(driver, "Here is your file back."), 15_000, "the reply");
    const sent = await eventually(() => files().find((f) => f.name === "notes.txt"), 15_000, "the file in the chat");
    expect(Buffer.from(sent.data).equals(notes)).toBe(true);
  });

  it("a file over the limit gets a notice, nothing is written, and the text is still handled", async ({ skip }) => {
    const ctx = ready(skip);
    const { driver, model, send } = ctx;
    const big = Buffer.alloc(Math.floor(CONTRACT_MAX_FILE_MB * 1024 * 1024 * 1.5), 7);
    const captions = driver.fileCaptions !== false;
    const before = model.requests.length;
    model.enqueue({ text: "I read your words." });
    const caption = captions ? { caption: "and a question" } : {};
    await send({ kind: "file", name: "huge.bin", mime: "application/octet-stream", data: big, ...caption });
    await eventually(
      () => driver.botMessages().find((m) => /huge\.bin/.test(m.text) && /limit/.test(m.text)),
      15_000,
      "the notice",
    );
    if (captions) {
      await eventually(withText(driver, "I read your words."), 15_000, "the reply to the text");
      expect(lastUserText(model.requests.at(-1)!)).toContain("and a question");
    } else {
      // Nothing but the refused file: no run starts.
      await sleep(500);
      expect(model.requests.length).toBe(before);
    }
    await sleep(100);
    expect(storedFiles(ctx)).toEqual([]);
  });
}
