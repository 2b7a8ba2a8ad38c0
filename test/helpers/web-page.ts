/**
 * What the web chat's browser tests share: a page per test in a fresh browser context (a new
 * user: new client-id cookie, empty localStorage), watched for uncaught errors and CSP refusals,
 * and the steps a person takes (open the chat, type, wait for a reply, take a screenshot).
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, BrowserContextOptions, Page } from "playwright-core";
import { expect } from "vitest";
import { type ChatCompletionRequest, contentText } from "../../src/testing/mock-model.js";
import { ROOT } from "./cli.js";

/** Where the screenshots go. */
export const ARTIFACTS = path.join(ROOT, "artifacts");
export const ASSISTANT = '[data-role="assistant"] .body';
export const USER = '[data-role="user"] .body';

/** One test's pages: its browser context, and what went wrong in them. */
export class PageSession {
  context: BrowserContext | undefined;
  /** Uncaught errors and Content-Security-Policy refusals in the test's pages: each fails the test. */
  problems: string[] = [];

  constructor(private readonly browser: Browser) {
    mkdirSync(ARTIFACTS, { recursive: true });
  }

  /** A new user's tab. */
  async newPage(width = 1000, height = 700, options: BrowserContextOptions = {}): Promise<Page> {
    this.context = await this.browser.newContext({ viewport: { width, height }, ...options });
    const page = await this.context.newPage();
    this.watch(page);
    return page;
  }

  watch(page: Page): void {
    page.setDefaultTimeout(20_000);
    page.on("pageerror", (err) => this.problems.push(`page error: ${err.message}`));
    page.on("console", (msg) => {
      if (/Content.Security.Policy/i.test(msg.text())) this.problems.push(`CSP: ${msg.text()}`);
    });
  }

  /** Closes the context; returns (and forgets) the problems seen. */
  async end(): Promise<string[]> {
    const problems = this.problems;
    this.problems = [];
    await this.context?.close();
    this.context = undefined;
    return problems;
  }
}

/** Opens the chat and waits until it can be typed into and its event stream is open. */
export async function openChat(page: Page, url: string): Promise<void> {
  const res = await page.goto(url);
  expect(res?.status()).toBe(200);
  await streamOpen(page);
}

/** Typing events go only to open streams, so a test that looks for one waits for the stream. */
export async function streamOpen(page: Page): Promise<void> {
  await page.locator("#composer-text").waitFor();
  await page.locator('#chat[data-stream="open"]').waitFor({ state: "attached" });
}

export async function say(page: Page, text: string): Promise<void> {
  await page.locator("#composer-text").fill(text);
  await page.locator("#composer-text").press("Enter");
}

/** Waits for an assistant message whose whole text is `text`. */
export async function reply(page: Page, text: string): Promise<void> {
  await page
    .locator(ASSISTANT)
    .filter({ hasText: new RegExp(`^${escapeRe(text)}$`) })
    .waitFor();
}

/** Saves a screenshot of the whole page as artifacts/web-chat-<name>.png and checks it is there. */
export async function shot(page: Page, name: string): Promise<string> {
  const file = path.join(ARTIFACTS, `web-chat-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  expect(existsSync(file)).toBe(true);
  expect(statSync(file).size).toBeGreaterThan(1000);
  return file;
}

export function escapeRe(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Everything one model request carried, as plain text. */
export function requestText(req: ChatCompletionRequest | undefined): string {
  return (req?.messages ?? []).map((m) => contentText(m.content)).join("\n");
}
