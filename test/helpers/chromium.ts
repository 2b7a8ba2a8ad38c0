/** Headless Chromium for the page tests: Debian's package (bash .ci/run installs it), started the same way everywhere. */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { expect } from "vitest";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

/** Launches headless Chromium; fails the caller with what to install when it is missing. */
export async function launchChromium(): Promise<Browser> {
  expect(CHROMIUM, "Debian's chromium package is required (bash .ci/run installs it)").toBeDefined();
  return chromium.launch({
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
}
