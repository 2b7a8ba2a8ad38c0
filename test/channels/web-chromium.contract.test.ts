/**
 * The channel contract on the web chat page itself: headless Chromium (Debian's package) types
 * into `/chat`, clicks its buttons and reads the replies as the page draws them
 * (test/helpers/browser-driver.ts). web.contract.test.ts runs every part over the page's wire;
 * this file runs the parts whose point is what a person sees while talking to the agent, once
 * through a real browser. One Chromium serves the file; each test gets a fresh context (a new user).
 */
import type { Browser } from "playwright-core";
import { afterAll } from "vitest";
import { channelContract } from "../../src/testing/contract/index.js";
import { BrowserDriver } from "../helpers/browser-driver.js";
import { launchChromium } from "../helpers/chromium.js";

let chromium: Promise<Browser> | undefined;
const browser = () => {
  chromium ??= launchChromium();
  return chromium;
};

afterAll(async () => {
  await (await chromium)?.close();
});

channelContract("web in Chromium", async () => new BrowserDriver(browser), {
  parts: ["followups", "conversation", "delivery"],
});
