/**
 * The status page in a real browser: headless Chromium (Debian's package) renders it, the test
 * reads each channel's and each agent's state from the page and saves screenshots to artifacts/.
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PlatformAuthError } from "../../src/errors.js";
import { freePort, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { launchChromium } from "../helpers/chromium.js";
import { ROOT } from "../helpers/cli.js";

const ARTIFACTS = path.join(ROOT, "artifacts");

let gw: TestGateway | undefined;
let browser: Browser | undefined;
beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

/** The page as the browser shows it (loopback needs no token). */
async function openPage(query = ""): Promise<Page> {
  const page = await browser!.newPage({ viewport: { width: 1100, height: 700 } });
  const res = await page.goto(`${gw!.url}/${query}`);
  expect(res?.status()).toBe(200);
  return page;
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: true });
  expect(existsSync(path.join(ARTIFACTS, name))).toBe(true);
}

describe("status page", () => {
  it("renders every channel with its state, the agent, and the web chat link", { timeout: 60_000 }, async () => {
    const ok = new LoopbackWorld();
    const broken = new LoopbackWorld();
    const chat = new LoopbackWorld();
    broken.startError = () => new PlatformAuthError("broken", "401 Unauthorized: invalid token");
    gw = await startTestGateway({
      channels: {
        telegram_ok: ok.channelConfig(),
        slack_broken: broken.channelConfig(),
        feishu_off: { enabled: false },
        web: chat.channelConfig({ link: "/chat" }),
      },
      server: { admin_token: "page-token" },
      supervisor: { baseDelayMs: 60_000 },
    });
    const denied = await browser!.newPage();
    expect((await denied.goto(`${gw.url}/`))?.status()).toBe(401);
    const page = await openPage("?token=page-token");
    // textContent reads the DOM; isVisible is the rendered page's part (what innerText implied).
    const state = (name: string) => page.locator(`tr[data-channel="${name}"] .state`).textContent();
    expect(await state("telegram_ok")).toBe("running");
    expect(await state("slack_broken")).toBe("failed");
    expect(await state("feishu_off")).toBe("disabled");
    const reason = page.locator('tr[data-channel="slack_broken"] .reason');
    expect(await reason.isVisible()).toBe(true);
    expect(await reason.textContent()).toContain("invalid token");
    expect(await page.locator(".summary").textContent()).toBe("Needs attention: 1 channel.");

    // The web chat: linked at the top and in its row; the other channels have no link.
    const top = page.locator(".links a");
    expect(await top.count()).toBe(1);
    expect([await top.textContent(), await top.getAttribute("href")]).toEqual(["Open the web chat", "/chat"]);
    expect(await page.locator('tr[data-channel="web"] a.chat-link').getAttribute("href")).toBe("/chat");
    expect(await page.locator('tr[data-channel="telegram_ok"] a').count()).toBe(0);

    const agent = page.locator('tr[data-agent="default/default"]');
    expect(await agent.locator(".state").textContent()).toBe("reachable");
    expect(await agent.textContent()).toContain("model mock");
    await screenshot(page, "status-page.png");
  });

  it("with no channel enabled, says what to enable and where", { timeout: 60_000 }, async () => {
    gw = await startTestGateway({ channels: { telegram: { enabled: false } } });
    const page = await openPage();
    const body = (await page.locator("body").textContent()) ?? "";
    expect(body).not.toContain("All enabled channels are running");
    expect(await page.locator(".summary").textContent()).toMatch(/^No channel is enabled/);
    const hint = page.locator(".hint");
    expect(await hint.isVisible()).toBe(true);
    expect(await hint.textContent()).toMatch(/enabled: true.*channels:.*web.*\/chat.*config\.example\.yaml/s);
    expect(await page.locator(".links a").count()).toBe(0);
    await screenshot(page, "status-page-no-channels.png");
  });

  it("shows a model endpoint that cannot be reached before anyone chatted, and counts it", { timeout: 60_000 }, async () => {
    const world = new LoopbackWorld();
    const port = await freePort();
    gw = await startTestGateway({
      channels: { loop: world.channelConfig() },
      modelConfig: { base_url: `http://127.0.0.1:${port}/v1` },
    });
    const page = await openPage();
    expect(await page.locator('tr[data-channel="loop"] .state').textContent()).toBe("running");
    const agent = page.locator('tr[data-agent="default/default"]');
    expect(await agent.locator(".state").textContent()).toBe("not reachable");
    const problem = agent.locator(".problem");
    expect(await problem.isVisible()).toBe(true);
    expect(await problem.textContent()).toMatch(
      new RegExp(`model mock: http://127\\.0\\.0\\.1:${port}/v1/models is not reachable \\(connect ECONNREFUSED.*base_url`),
    );
    expect(await page.locator(".summary").textContent()).toBe("Needs attention: 1 agent whose model or backend cannot be used.");
    expect(world.messages).toEqual([]);
    await screenshot(page, "status-page-model-down.png");
  });
});
