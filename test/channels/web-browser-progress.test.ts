/**
 * The progress panel in a real browser: headless Chromium opens the chat, and a run with three
 * tool calls streams into its conversation, first through the web channel's send and edit
 * directly (every state of the view, reasoning included), then through a whole gateway with
 * `progress: full` and the mock model calling three slow tools. The page shows a panel under the
 * reply that opens while the run goes, marks each tool ✓ with its duration, and folds to the
 * summary at the end; reasoning sits in its own collapsed block. Screenshots:
 * artifacts/web-chat-progress*.png.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Channel, ConversationRef } from "../../src/channels/types.js";
import { sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { launchChromium } from "../helpers/chromium.js";
import { ANSWER, enqueueThreeToolRun, slowTools, threeToolRun } from "../helpers/progress-run.js";
import { ASSISTANT, openChat, PageSession, reply, say, shot } from "../helpers/web-page.js";

const T = 60_000;
const PANEL = `${ASSISTANT} + .progress`;

let browser: Browser;
let gw: TestGateway;
let session: PageSession;

beforeAll(async () => {
  browser = await launchChromium();
  session = new PageSession(browser);
  gw = await startTestGateway({ channels: { web: { enabled: true } } });
}, T);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

afterEach(async () => {
  expect(await session.end()).toEqual([]);
});

/** The conversation the page has open, as the channel's ref (its client id cookie and its localStorage). */
async function pageRef(page: Page): Promise<ConversationRef> {
  const cookies = await session.context?.cookies();
  const client = cookies?.find((c) => c.name === "antler_chat_client")?.value;
  const conv = (await page.evaluate(`JSON.parse(localStorage.getItem("antler-chat:/chat") ?? "{}").current`)) as string;
  const web = gw.gateway.slot("web")?.channel as Channel;
  const ref = await web.resolveTarget?.({ chat: `${client}/${conv}` });
  if (!ref) throw new Error("the page's conversation has no ref");
  return ref;
}

/** Every state the panel shows, in order: its top line, whether its steps are open, and its rows. */
async function watchPanel(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    window.panels = [];
    const read = () => {
      const panel = document.querySelector(".msg .progress");
      if (!panel) return "none";
      const steps = panel.querySelector("details.steps");
      const top = (steps ? steps.querySelector("summary") : panel.querySelector(".headline"))?.textContent;
      const rows = [...panel.querySelectorAll(".rows li")].map((li) => li.textContent);
      return JSON.stringify({ top, open: steps ? steps.open : null, rows });
    };
    new MutationObserver(() => {
      const now = read();
      if (window.panels[window.panels.length - 1] !== now) window.panels.push(now);
    }).observe(document.getElementById("messages"), { subtree: true, childList: true, characterData: true, attributes: true });
  })()`);
}

describe("the progress panel in headless Chromium", () => {
  it("follows a run of three tools and ends with three ✓ rows under the summary", { timeout: T }, async () => {
    const page = await session.newPage();
    await openChat(page, `${gw.url}/chat`);
    const ref = await pageRef(page);
    const web = gw.gateway.slot("web")?.channel as Channel;
    await watchPanel(page);
    const [first, ...rest] = threeToolRun({ reasoning: "I should search first, then read, then test." });
    if (!first) throw new Error("no steps");
    const handle = await web.send(ref, { text: first.text || "Working…", progress: first.progress });
    for (const step of rest) {
      await sleep(120);
      await web.edit(handle, { text: step.text, progress: step.progress });
    }
    await reply(page, "All three steps are done.");
    const panel = page.locator(PANEL);
    // The end: the summary as the top line, folded, with the three tools done inside.
    await expect.poll(() => panel.locator("details.steps > summary").textContent()).toBe("✓ 3 tools, 43 s");
    expect(await panel.locator("details.steps").getAttribute("open")).toBeNull();
    const rows = panel.locator(".rows li");
    expect(await rows.count()).toBe(3);
    expect(await panel.locator('.rows li[data-state="done"] .icon').allTextContents()).toEqual(["✓", "✓", "✓"]);
    expect(await panel.locator(".rows .title").allTextContents()).toEqual(["web_search", "read_file", "run_tests"]);
    expect(await panel.locator(".rows .took").allTextContents()).toEqual(["1.2 s", "0.3 s", "41 s"]);
    // Folded rows are not seen until the summary is clicked.
    expect(await rows.first().isVisible()).toBe(false);
    await panel.locator("details.steps > summary").click();
    expect(await rows.first().isVisible()).toBe(true);
    // Reasoning: its own block, collapsed, never in the reply's text.
    const reasoning = panel.locator("details.reasoning");
    expect(await reasoning.getAttribute("open")).toBeNull();
    expect(await reasoning.locator("p").textContent()).toBe("I should search first, then read, then test.");
    expect(await page.locator(ASSISTANT).textContent()).toBe("All three steps are done.");
    // While the run went the panel was open, showed the current step, and ticked the tools off one by one.
    const seen = ((await page.evaluate("window.panels")) as string[]).filter((s) => s !== "none").map((s) => JSON.parse(s));
    expect(seen[0]).toMatchObject({ top: "⏳ Searching the web…", open: true });
    expect(seen).toContainEqual(
      expect.objectContaining({ top: "⏳ Running tests…", open: true, rows: expect.arrayContaining(["⏳ run_tests unit"]) }),
    );
    expect(seen.some((s) => s.rows.filter((r: string) => r.startsWith("✓")).length === 2)).toBe(true);
    await shot(page, "progress");
  });

  it("shows compact as one line, and takes the panel away when the run ends without a summary", { timeout: T }, async () => {
    const page = await session.newPage(390, 800);
    await openChat(page, `${gw.url}/chat`);
    const ref = await pageRef(page);
    const web = gw.gateway.slot("web")?.channel as Channel;
    const steps = threeToolRun({ mode: "compact", summary: false });
    const [first, ...rest] = steps;
    if (!first) throw new Error("no steps");
    const handle = await web.send(ref, { text: "Working…", progress: first.progress });
    await expect.poll(() => page.locator(`${PANEL} .headline`).textContent()).toBe("⏳ Searching the web…");
    expect(await page.locator(`${PANEL} details`).count()).toBe(0);
    for (const step of rest.slice(0, -1)) await web.edit(handle, { text: step.text || "Working…", progress: step.progress });
    await expect.poll(() => page.locator(`${PANEL} .headline`).textContent()).toBe("⏳ Running tests…");
    await shot(page, "progress-compact");
    const last = steps.at(-1);
    await web.edit(handle, { text: last?.text ?? "", progress: last?.progress });
    await reply(page, "All three steps are done.");
    await expect.poll(() => page.locator(".msg .progress").count()).toBe(0);
  });
});

describe("the progress panel through the whole gateway", () => {
  it("progress full: a run of three slow tools ends with the reply and three ✓ rows under its summary", {
    timeout: T,
  }, async () => {
    const full = await startTestGateway({
      channels: { web: { enabled: true } },
      tools: slowTools(),
      gateway: { progress: "full" },
    });
    try {
      enqueueThreeToolRun(full.model);
      const page = await session.newPage();
      await openChat(page, `${full.url}/chat`);
      await watchPanel(page);
      await say(page, "How does pagination work?");
      await reply(page, `Let me look. ${ANSWER}`);
      const panel = page.locator(PANEL);
      await expect.poll(() => panel.locator("details.steps > summary").textContent()).toMatch(/^✓ 3 tools, \d+(\.\d)? s$/);
      expect(await panel.locator(".rows .title").allTextContents()).toEqual(["web_search", "fetch_url", "run_tests"]);
      expect(await panel.locator(".rows .icon").allTextContents()).toEqual(["✓", "✓", "✓"]);
      expect(await panel.locator(".rows .took").count()).toBe(3);
      const seen = ((await page.evaluate("window.panels")) as string[]).filter((s) => s !== "none").map((s) => JSON.parse(s));
      // While a tool ran, the panel was open and said so.
      expect(seen.some((s) => s.open === true && s.rows.some((r: string) => r.startsWith("⏳ run_tests")))).toBe(true);
      expect(await page.locator(ASSISTANT).count()).toBe(1);
      await shot(page, "progress-gateway");
    } finally {
      await full.stop();
    }
  });
});
