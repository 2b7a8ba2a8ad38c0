/**
 * The web chat page in a real browser: headless Chromium (Debian's package) opens `/chat` on a
 * whole gateway with the mock model behind it, types, clicks and reloads like a person would, and
 * saves a screenshot of each scene to artifacts/web-chat-*.png. Each test gets a fresh browser
 * context, so a fresh client-id cookie and an empty localStorage: a new user.
 */
import { networkInterfaces } from "node:os";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { contentText } from "../../src/testing/mock-model.js";
import { startTestGateway, type TestGateway } from "../contract/gateway.js";
import { launchChromium } from "../helpers/chromium.js";
import { ASSISTANT, openChat as openAt, PageSession, reply, requestText, say, shot, USER } from "../helpers/web-page.js";

const T = 60_000;
/** The first address of this machine that is not loopback, to reach the gateway as others would. */
const LAN_IP = Object.values(networkInterfaces())
  .flat()
  .find((a) => a?.family === "IPv4" && !a.internal)?.address;

let browser: Browser;
let shared: TestGateway;
let session: PageSession;
let extra: TestGateway | undefined;

beforeAll(async () => {
  browser = await launchChromium();
  session = new PageSession(browser);
  shared = await startTestGateway({ channels: { web: { enabled: true } } });
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

const newPage = (width?: number, height?: number) => session.newPage(width, height);
const watch = (page: Page) => session.watch(page);
const openChat = (page: Page, url = `${shared.url}/chat`) => openAt(page, url);

describe("web chat in headless Chromium", () => {
  it("streams a reply into the page, ending with the model's exact text", { timeout: T }, async () => {
    const full =
      "Streaming works: this reply arrives a few characters at a time and the page shows every step until it is whole.";
    shared.model.enqueue({ text: full, chunkSize: 4, delayMs: 30, firstByteMs: 800 });
    const page = await newPage();
    await openChat(page);
    // Every text the newest assistant message and the typing line show, in order, as the page
    // changes (the indicator may show for less than Playwright's polling interval).
    await page.evaluate(`(() => {
      const record = (list, text) => list[list.length - 1] !== text && list.push(text);
      const options = { subtree: true, childList: true, characterData: true };
      window.seen = [];
      new MutationObserver(() => {
        const bodies = document.querySelectorAll('${ASSISTANT}');
        if (bodies.length) record(window.seen, bodies[bodies.length - 1].textContent);
      }).observe(document.getElementById("messages"), options);
      window.typing = [];
      new MutationObserver(() => record(window.typing, document.getElementById("typing").textContent))
        .observe(document.getElementById("typing"), options);
    })()`);
    await say(page, "Tell me something, slowly.");
    await expect.poll(() => page.locator(USER).allTextContents()).toEqual(["Tell me something, slowly."]);
    await reply(page, full);
    const seen = (await page.evaluate("window.seen")) as string[];
    expect(seen.at(-1)).toBe(full);
    const partial = seen.filter((t) => t.length < full.length);
    expect(partial.length, `texts seen: ${JSON.stringify(seen)}`).toBeGreaterThan(0);
    for (const t of partial) expect(full.startsWith(t), `"${t}" is a beginning of the reply`).toBe(true);
    // "typing…" showed while the model was slow to start, and went with the reply.
    expect(await page.evaluate("window.typing")).toEqual(["Antler is typing…", ""]);
    // The conversation is named after the first message.
    await expect.poll(() => page.locator('nav a[aria-current="page"]').textContent()).toBe("Tell me something, slowly.");
    await shot(page, "stream");
  });

  it("shows a question's buttons and resumes the run with the one clicked", { timeout: T }, async () => {
    const before = shared.model.requests.length;
    shared.model.enqueue(
      {
        toolCalls: [
          { name: "ask_clarification", args: { question: "Which colour should the logo be?", options: ["Red", "Blue"] } },
        ],
      },
      { text: "Blue it is." },
    );
    const page = await newPage();
    await openChat(page);
    await say(page, "Make me a logo.");
    await page.locator(ASSISTANT).filter({ hasText: "Which colour should the logo be?" }).waitFor();
    const blue = page.getByRole("button", { name: "Blue", exact: true });
    await blue.waitFor();
    const answers = page.getByRole("group", { name: "Answers" }).getByRole("button");
    await expect.poll(() => answers.allTextContents()).toEqual(["Red", "Blue"]);
    await shot(page, "question");
    // An open question comes back with its buttons after a reload.
    await page.reload();
    await blue.waitFor();
    expect(await page.locator(USER).allTextContents()).toEqual(["Make me a logo."]);
    await blue.click();
    await reply(page, "Blue it is.");
    const resumed = shared.model.requests.slice(before).at(-1);
    const tool = resumed?.messages.find((m) => m.role === "tool");
    expect(contentText(tool?.content)).toContain("Blue");
    // The question's message lost its buttons (answered), or they stay disabled.
    await expect.poll(() => page.locator(".buttons button:not([disabled])").count()).toBe(0);
    await shot(page, "answered");
  });

  it("starts a fresh agent thread on /new, in a new conversation beside the old one", { timeout: T }, async () => {
    const page = await newPage();
    await openChat(page);
    await say(page, "Remember the word pineapple.");
    await reply(page, "ok: Remember the word pineapple.");
    await say(page, "/new");
    await expect.poll(() => page.locator("#messages > *").count()).toBe(0);
    await expect.poll(() => page.locator("nav a").allTextContents()).toEqual(["New chat", "Remember the word pineapple."]);
    const before = shared.model.requests.length;
    await say(page, "What word was it?");
    await reply(page, "ok: What word was it?");
    const next = shared.model.requests.slice(before);
    expect(next).toHaveLength(1);
    expect(requestText(next[0])).toContain("What word was it?");
    expect(requestText(next[0])).not.toContain("pineapple");
    await shot(page, "new");
  });

  it("keeps conversations across a reload and switches between them", { timeout: T }, async () => {
    const page = await newPage();
    await openChat(page);
    await say(page, "First conversation here.\nWith a second line.");
    await reply(page, "ok: First conversation here.\nWith a second line.");
    const current = page.locator('nav a[aria-current="page"]');
    await expect.poll(() => current.textContent()).toBe("First conversation here. With a second l…");
    const firstId = await current.getAttribute("data-id");

    await page.reload();
    await page.locator(ASSISTANT).first().waitFor();
    expect(await page.locator(USER).allTextContents()).toEqual(["First conversation here.\nWith a second line."]);
    expect(await page.locator(ASSISTANT).allTextContents()).toEqual(["ok: First conversation here.\nWith a second line."]);
    expect(await current.getAttribute("data-id")).toBe(firstId);

    await page.getByRole("button", { name: "New chat" }).click();
    await expect.poll(() => page.locator("#messages > *").count()).toBe(0);
    expect(await current.textContent()).toBe("New chat");
    await say(page, "Second conversation.");
    await reply(page, "ok: Second conversation.");
    await expect
      .poll(() => page.locator("nav a").allTextContents())
      .toEqual(["Second conversation.", "First conversation here. With a second l…"]);

    await page.locator(`nav a[data-id="${firstId}"]`).click();
    await reply(page, "ok: First conversation here.\nWith a second line.");
    expect(await page.locator(ASSISTANT).allTextContents()).toEqual(["ok: First conversation here.\nWith a second line."]);
    expect(await current.getAttribute("data-id")).toBe(firstId);
    // The stream follows the conversation switched to: a new reply lands here.
    await say(page, "Back again.");
    await reply(page, "ok: Back again.");
    await page.reload();
    await reply(page, "ok: Back again.");
    expect(await current.getAttribute("data-id")).toBe(firstId);
    await shot(page, "reload");
  });

  it("shows a message sent in one tab in the browser's other tab, once", { timeout: T }, async () => {
    const first = await newPage();
    await openChat(first);
    const second = await session.context!.newPage();
    watch(second);
    await openChat(second, `${shared.url}/chat`);
    const convOf = (page: Page) => page.locator('nav a[aria-current="page"]').getAttribute("data-id");
    expect(await convOf(second)).toBe(await convOf(first));
    await say(first, "Sent from the first tab.");
    await reply(second, "ok: Sent from the first tab.");
    for (const page of [first, second]) {
      expect(await page.locator(USER).allTextContents()).toEqual(["Sent from the first tab."]);
      expect(await page.locator(ASSISTANT).allTextContents()).toEqual(["ok: Sent from the first tab."]);
    }
  });

  it("marks a message whose answer was lost as not sent, and Retry sends it with the same id", { timeout: T }, async () => {
    const page = await newPage();
    await openChat(page);
    const posted: string[] = [];
    // The first post reaches the server, but its answer is lost on the way back.
    await page.route("**/api/conversations/*/messages", async (route) => {
      posted.push(route.request().postData() ?? "");
      if (posted.length > 1) return route.continue();
      await route.fetch();
      await route.abort("connectionreset");
    });
    const before = shared.model.requests.length;
    await say(page, "Did this arrive?");
    const status = page.locator('[data-role="user"] .status');
    await status.filter({ hasText: "Not sent: The chat server cannot be reached." }).waitFor();
    await reply(page, "ok: Did this arrive?");
    await shot(page, "not-sent");
    await page.getByRole("button", { name: "Retry" }).click();
    await expect.poll(() => status.count()).toBe(0);
    expect(posted).toHaveLength(2);
    expect(JSON.parse(posted[1]!)).toEqual(JSON.parse(posted[0]!));
    // The server knew the id: the agent saw the message once, and the page shows it once.
    const runs = shared.model.requests.slice(before).filter((r) => requestText(r).includes("Did this arrive?"));
    expect(runs).toHaveLength(1);
    expect(await page.locator(USER).allTextContents()).toEqual(["Did this arrive?"]);
  });

  it("keeps working across a gateway restart: a message sent meanwhile is retried, replies stream again", {
    timeout: T,
  }, async () => {
    extra = await startTestGateway({ channels: { web: { enabled: true } } });
    const { dir, port, model } = extra;
    const page = await newPage();
    await openChat(page, `${extra.url}/chat`);
    await say(page, "Before the restart.");
    await reply(page, "ok: Before the restart.");
    await extra.stop(false);
    extra = undefined;
    await say(page, "While it was down.");
    const status = page.locator('[data-role="user"] .status');
    await status.filter({ hasText: "Not sent:" }).waitFor();
    extra = await startTestGateway({ channels: { web: { enabled: true } }, dir, port, model });
    await page.getByRole("button", { name: "Retry" }).click();
    await expect.poll(() => status.count()).toBe(0);
    // The page's event stream found the new process by itself.
    await reply(page, "ok: While it was down.");
    await page.reload();
    await reply(page, "ok: While it was down.");
    expect(await page.locator(USER).allTextContents()).toEqual(["Before the restart.", "While it was down."]);
  });

  it("can be used with the keyboard alone, on a 360 px wide screen", { timeout: T }, async () => {
    const page = await newPage(360, 740);
    await openChat(page);
    // The focused element's id, else its text.
    const focused = () =>
      page.evaluate("document.activeElement && (document.activeElement.id || document.activeElement.textContent)");
    const tabTo = async (target: string, key = "Tab") => {
      for (let i = 0; i < 20 && (await focused()) !== target; i++) await page.keyboard.press(key);
      expect(await focused()).toBe(target);
    };
    await tabTo("composer-text");
    await page.keyboard.type("Typed with keys only.");
    await page.keyboard.press("Enter");
    await reply(page, "ok: Typed with keys only.");

    shared.model.enqueue(
      { toolCalls: [{ name: "ask_clarification", args: { question: "Tea or coffee?", options: ["Tea", "Coffee"] } }] },
      { text: "Coffee, then." },
      { toolCalls: [{ name: "ask_clarification", args: { question: "Milk?", options: ["Yes", "No"] } }] },
      { text: "No milk." },
    );
    const answer = async (question: string, label: string, key: "Enter" | " ") => {
      await page.keyboard.type(question);
      await page.keyboard.press("Enter");
      await page.getByRole("button", { name: label, exact: true }).waitFor();
      // The buttons come before the composer, so Shift+Tab walks back to them.
      await tabTo(label, "Shift+Tab");
      expect(await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")).toBe("solid");
      await page.keyboard.press(key);
    };
    await answer("Something to drink?", "Coffee", "Enter");
    await reply(page, "Coffee, then.");
    await tabTo("composer-text");
    await answer("And with it?", "No", " ");
    await reply(page, "No milk.");
    expect(contentText(shared.model.requests.at(-1)?.messages.findLast((m) => m.role === "tool")?.content)).toContain("No");
    // Nothing is wider than the screen.
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(360);
    await shot(page, "keyboard-360");
  });

  it.skipIf(!LAN_IP)("refuses a browser on another machine when no token is set", { timeout: T }, async () => {
    extra = await startTestGateway({ channels: { web: { enabled: true } }, server: { host: "0.0.0.0" } });
    const remote = `http://${LAN_IP}:${extra.port}/chat`;
    const api = await fetch(`${remote}/api/session`);
    expect(api.status).toBe(403);
    expect(((await api.json()) as { error: string }).error).toContain("channels.web.token");
    const page = await newPage();
    const res = await page.goto(remote);
    expect(res?.status()).toBe(403);
    expect(await page.locator("body").textContent()).toContain("channels.web.token");
    await shot(page, "refused");
    // The same server still serves this machine.
    expect((await fetch(`${extra.url}/chat/api/session`)).status).toBe(200);
  });

  it.skipIf(!LAN_IP)(
    "asks another machine for the token, refuses a wrong one and opens with the right one",
    { timeout: T },
    async () => {
      extra = await startTestGateway({
        channels: { web: { enabled: true, token: "web-secret-token" } },
        server: { host: "0.0.0.0" },
      });
      const page = await newPage();
      const res = await page.goto(`http://${LAN_IP}:${extra.port}/chat`);
      expect(res?.status()).toBe(200);
      const token = page.getByLabel("Access token");
      await token.waitFor();
      await token.fill("not-the-token");
      await token.press("Enter");
      await page.locator("#login-error").filter({ hasText: "That token is wrong." }).waitFor();
      await shot(page, "login");
      await token.fill("web-secret-token");
      await token.press("Enter");
      await page.locator("#composer-text").waitFor();
      await say(page, "Hello from afar.");
      await reply(page, "ok: Hello from afar.");
      await shot(page, "signed-in");
      // With a token, loopback needs it too (a reverse proxy on this host would be loopback).
      expect((await fetch(`${extra.url}/chat/api/session`)).status).toBe(401);
    },
  );

  it.skipIf(LAN_IP)("(skipped: this machine has no non-loopback IPv4 address to reach the gateway from)", () => {});
});
