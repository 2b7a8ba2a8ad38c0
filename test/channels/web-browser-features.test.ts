/**
 * The web chat as a person who uses chat apps expects it, in headless Chromium: a phone-sized
 * screen with the composer always in view, Stop, real lists, code with a Copy button, a list of
 * conversations that keeps old ones (rename, delete, reload), file upload to the model, and the
 * banner when no model answers. Screenshots go to artifacts/web-chat-*.png.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PDF, PNG } from "../../src/testing/contract/media.js";
import { contentText, lastUserImages, lastUserText, startMockModel } from "../../src/testing/mock-model.js";
import { startTestGateway, type TestGateway } from "../contract/gateway.js";
import { launchChromium } from "../helpers/chromium.js";
import { ASSISTANT, openChat, PageSession, reply, say, shot, USER } from "../helpers/web-page.js";

const T = 90_000;

let browser: Browser;
let shared: TestGateway;
let session: PageSession;
let extra: TestGateway | undefined;

beforeAll(async () => {
  browser = await launchChromium();
  session = new PageSession(browser);
  shared = await startTestGateway({ channels: { web: { enabled: true } }, modelConfig: { supports_vision: true } });
}, T);

afterAll(async () => {
  await browser?.close();
  await shared?.stop();
});

afterEach(async () => {
  const problems = await session.end();
  await extra?.stop();
  extra = undefined;
  expect(problems).toEqual([]);
});

const chat = () => `${shared.url}/chat`;

/** Whether the element is wholly inside the viewport. */
async function onScreen(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).boundingBox();
  const view = page.viewportSize();
  if (!box || !view) return false;
  return box.y >= 0 && box.x >= 0 && box.y + box.height <= view.height && box.x + box.width <= view.width;
}

describe("web chat features in headless Chromium", () => {
  it("keeps the composer on screen after 10 replies at 390×800, and nothing overflows sideways", { timeout: T }, async () => {
    const page = await session.newPage(390, 800);
    await openChat(page, chat());
    for (let i = 1; i <= 10; i++) {
      await say(page, `Message number ${i}, long enough to wrap onto a second line on a phone screen.`);
      await reply(page, `ok: Message number ${i}, long enough to wrap onto a second line on a phone screen.`);
    }
    expect(await page.locator(ASSISTANT).count()).toBe(10);
    expect(await onScreen(page, "#composer-text")).toBe(true);
    expect(await onScreen(page, "#composer")).toBe(true);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    // Every message shows when it was sent.
    expect(await page.locator(".msg time").count()).toBe(20);
    await shot(page, "phone-390");
    await page.setViewportSize({ width: 1100, height: 800 });
    expect(await onScreen(page, "#composer-text")).toBe(true);
    await shot(page, "desktop-1100");

    // The status page fits a phone too: its tables scroll inside themselves.
    await page.setViewportSize({ width: 390, height: 800 });
    const res = await page.goto(`${shared.url}/`);
    expect(res?.status()).toBe(200);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await shot(page, "status-390");
  });

  it("serves a favicon", async () => {
    for (const path of ["/favicon.ico", "/chat/favicon.svg"]) {
      const res = await fetch(`${shared.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/svg+xml");
    }
  });

  it("offers Stop while a reply streams, and Stop ends it", { timeout: T }, async () => {
    const full = `A long story. ${"Once upon a time there was a gateway that streamed. ".repeat(12)}The end.`;
    shared.model.enqueue({ text: full, chunkSize: 3, delayMs: 40 });
    const page = await session.newPage(390, 800);
    await openChat(page, chat());
    const stop = page.getByRole("button", { name: "Stop", exact: true });
    await say(page, "Tell me a long story.");
    await page.locator(ASSISTANT).filter({ hasText: "Once upon" }).first().waitFor();
    await stop.waitFor();
    await shot(page, "streaming-stop");
    await stop.click();
    await page
      .locator(USER)
      .filter({ hasText: /^\/stop$/ })
      .waitFor();
    await expect.poll(() => stop.isHidden(), { timeout: 10_000 }).toBe(true);
    // The run is over: the reply stops growing (it would take about 9 s in all) and never ends.
    const story = page.locator(ASSISTANT).filter({ hasText: "Once upon" }).first();
    await new Promise((r) => setTimeout(r, 1000));
    const stopped = await story.textContent();
    await new Promise((r) => setTimeout(r, 3000));
    expect(await story.textContent()).toBe(stopped);
    expect(stopped).not.toContain("The end.");
    expect(stopped!.length).toBeLessThan(full.length);
  });

  it("renders numbered and nested lists as lists, and copies a code block", { timeout: T }, async () => {
    const code = "const answer = 42;\nconsole.log(`the answer is ${answer} and this line is long enough to wrap on a phone`);";
    shared.model.enqueue({
      text: `Steps:\n\n1. First step\n2. Second step\n   - detail a\n   - detail b\n3. Third step\n\n\`\`\`js\n${code}\n\`\`\``,
    });
    const page = await session.newPage(390, 800, { permissions: ["clipboard-read", "clipboard-write"] });
    await openChat(page, chat());
    await say(page, "Give me steps and code.");
    const body = page.locator(ASSISTANT).last();
    await body.locator("pre").waitFor();
    expect(await body.locator("ol > li").count()).toBe(3);
    expect(await body.locator("ol > li > ul > li").allTextContents()).toEqual(["detail a", "detail b"]);
    // The long line wraps: the code block is no wider than the message.
    const pre = await body.locator("pre").evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    expect(pre.scroll).toBeLessThanOrEqual(pre.client);
    await body.getByRole("button", { name: "Copy code" }).click();
    await body.getByRole("button", { name: "Copy code" }).filter({ hasText: "Copied" }).waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(code);
    await shot(page, "lists-code-390");
  });

  it("keeps an old conversation after /new; renames and deletes conversations; all survives a reload", {
    timeout: T,
  }, async () => {
    const page = await session.newPage(1100, 800);
    page.on("dialog", (dialog) => dialog.accept());
    await openChat(page, chat());
    const titles = () => page.locator("nav a").allTextContents();
    await say(page, "Alpha conversation.");
    await reply(page, "ok: Alpha conversation.");
    await say(page, "/new");
    await expect.poll(titles).toEqual(["New chat", "Alpha conversation."]);
    await say(page, "Beta conversation.");
    await reply(page, "ok: Beta conversation.");
    await expect.poll(titles).toEqual(["Beta conversation.", "Alpha conversation."]);

    await page.getByRole("button", { name: "Rename Beta conversation." }).click();
    await page.getByLabel("New name").fill("My renamed chat");
    await page.getByLabel("New name").press("Enter");
    await expect.poll(titles).toEqual(["My renamed chat", "Alpha conversation."]);
    await page.reload();
    await expect.poll(titles).toEqual(["My renamed chat", "Alpha conversation."]);
    await reply(page, "ok: Beta conversation.");

    // The old conversation is still reachable, with its history.
    await page.locator("nav a", { hasText: "Alpha conversation." }).click();
    await reply(page, "ok: Alpha conversation.");
    await shot(page, "conversations-1100");
    await page.getByRole("button", { name: "Delete Alpha conversation." }).click();
    await expect.poll(titles).toEqual(["My renamed chat"]);
    await reply(page, "ok: Beta conversation.");
    await page.reload();
    await expect.poll(titles).toEqual(["My renamed chat"]);
  });

  it("sends an uploaded image and a PDF to the model", { timeout: T }, async () => {
    const page = await session.newPage(390, 800);
    await openChat(page, chat());
    shared.model.enqueue({ text: "A tiny picture." });
    await page.locator("#composer-file").setInputFiles({ name: "pixel.png", mimeType: "image/png", buffer: PNG });
    await page.locator(".chip", { hasText: "pixel.png" }).waitFor();
    await say(page, "What is in this picture?");
    await reply(page, "A tiny picture.");
    const asked = shared.model.requests.at(-1)!;
    expect(lastUserText(asked)).toContain("What is in this picture?");
    const images = lastUserImages(asked);
    expect(images).toHaveLength(1);
    expect(Buffer.from(images[0]!.split(",")[1]!, "base64").equals(PNG)).toBe(true);

    shared.model.enqueue({ toolCalls: [{ name: "read_file", args: { name: "report.pdf" } }] }, { text: "The numbers are up." });
    await page.locator("#composer-file").setInputFiles({ name: "report.pdf", mimeType: "application/pdf", buffer: PDF });
    await page.locator(".chip", { hasText: "report.pdf" }).waitFor();
    await say(page, "Summarize this.");
    await reply(page, "The numbers are up.");
    const toolResult = shared.model.requests
      .at(-1)!
      .messages.filter((m) => m.role === "tool")
      .at(-1);
    expect(contentText(toolResult?.content)).toContain("Quarterly numbers are up");
    expect(await page.locator(USER).last().textContent()).toContain("report.pdf");
    await shot(page, "upload-390");
  });
});

describe("the no-model banner", () => {
  let proxy: Server | undefined;
  afterEach(async () => {
    await new Promise((r) => (proxy ? proxy.close(r) : r(undefined)));
  });

  it("shows on load while the model cannot be reached, and goes once it answers", { timeout: T }, async () => {
    const model = await startMockModel();
    const target = new URL(model.url);
    let up = false;
    // The model's endpoint through a switch: while down, every connection is cut.
    proxy = createServer((req, res) => {
      if (!up) return req.socket.destroy();
      const forward = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on("error", () => res.destroy());
      req.pipe(forward);
    });
    await new Promise<void>((r) => proxy!.listen(0, "127.0.0.1", r));
    const port = (proxy.address() as AddressInfo).port;
    extra = await startTestGateway({
      channels: { web: { enabled: true } },
      model,
      modelConfig: { base_url: `http://127.0.0.1:${port}/v1` },
    });
    const page = await session.newPage(390, 800);
    await openChat(page, `${extra.url}/chat`);
    const banner = page.locator("#banner");
    await banner.filter({ hasText: "No model answers" }).waitFor();
    expect(await banner.textContent()).toContain("base_url");
    await shot(page, "banner-390");
    up = true;
    await say(page, "Are you there?");
    await reply(page, "ok: Are you there?");
    await expect.poll(() => banner.isHidden(), { timeout: 45_000, interval: 1000 }).toBe(true);
  });
});
