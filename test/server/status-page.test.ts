/**
 * The status page in a real browser: headless Chromium (Debian's package) renders it, the test
 * reads each channel's state from the page and saves a screenshot to artifacts/.
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { PlatformAuthError } from "../../src/errors.js";
import { startTestGateway, type TestGateway } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { ROOT } from "../helpers/cli.js";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
});

describe("status page", () => {
  it("renders every channel with its state in headless Chromium", { timeout: 60_000 }, async () => {
    expect(CHROMIUM, "Debian's chromium package is required (bash .ci/run installs it)").toBeDefined();
    const ok = new LoopbackWorld();
    const broken = new LoopbackWorld();
    broken.startError = () => new PlatformAuthError("broken", "401 Unauthorized: invalid token");
    gw = await startTestGateway({
      channels: { telegram_ok: ok.channelConfig(), slack_broken: broken.channelConfig(), feishu_off: { enabled: false } },
      server: { admin_token: "page-token" },
      supervisor: { baseDelayMs: 60_000 },
    });
    const browser = await chromium.launch({
      executablePath: CHROMIUM!,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 500 } });
      const denied = await page.goto(`${gw.url}/`);
      expect(denied?.status()).toBe(401);
      const res = await page.goto(`${gw.url}/?token=page-token`);
      expect(res?.status()).toBe(200);
      // textContent reads the DOM; isVisible is the rendered page's part (what innerText implied).
      const state = (name: string) => page.locator(`tr[data-channel="${name}"] .state`).textContent();
      expect(await state("telegram_ok")).toBe("running");
      expect(await state("slack_broken")).toBe("failed");
      expect(await state("feishu_off")).toBe("disabled");
      const reason = page.locator('tr[data-channel="slack_broken"] .reason');
      expect(await reason.isVisible()).toBe(true);
      expect(await reason.textContent()).toContain("invalid token");
      const dir = path.join(ROOT, "artifacts");
      mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: path.join(dir, "status-page.png"), fullPage: true });
      expect(existsSync(path.join(dir, "status-page.png"))).toBe(true);
    } finally {
      await browser.close();
    }
  });
});
