/**
 * ContractDriver over the real web chat page in headless Chromium: a fresh browser context (a new
 * user) opens `/chat`, types into the composer and presses Enter, clicks the buttons under the
 * answers, and reads the replies from the page as they are drawn (browser-watch.ts), so the
 * contract checks what a person sees in the browser, not the wire.
 *
 * - The page opens on the first thing the user does: the gateway is not up when the driver is made.
 * - `userSays` resolves once the page shows the message and its POST was answered, so the next
 *   message leaves after it, as a person's would.
 * - A delivery is `acked` when the page's POST got a 2xx. A redelivery is the page's own: the
 *   Retry under a message marked "Not sent", clicked, or else (the answer arrived) the same POST
 *   sent again from the page, with the same client message id, as Retry and a browser's resend do.
 * - There is no bot echo (a page never shows the bot its own messages) and no group.
 */
import type { Browser, Page, Request } from "playwright-core";
import type { ContractDriver, VisibleMessage } from "../contract/driver.js";
import { eventually } from "../contract/gateway.js";
import { SEEN_BINDING, type SeenReport, WATCH_SCRIPT } from "./browser-watch.js";
import { escapeRe, openChat, PageSession } from "./web-page.js";

/** A messages POST of the page: `POST <path>/api/conversations/<conv>/messages`. */
const isMessagePost = (r: Request) => r.method() === "POST" && /\/api\/conversations\/[^/]+\/messages$/.test(r.url());
const isActionPost = (r: Request) => r.method() === "POST" && /\/api\/conversations\/[^/]+\/actions$/.test(r.url());

export interface BrowserDriverOptions {
  /** `channels.web.edit_interval_ms` (default 100). */
  editIntervalMs?: number;
}

export class BrowserDriver implements ContractDriver {
  readonly channelName = "web";
  readonly streams = true;
  readonly buttons = true;
  readonly webhook = false;
  readonly minEditIntervalMs: number;
  private chatUrl: string | undefined;
  private session: PageSession | undefined;
  private opened: Promise<Page> | undefined;
  /** Every assistant message the page showed, by id, in the order they first appeared. */
  private readonly seen = new Map<string, VisibleMessage>();
  /** The last message's POST as the page sent it. */
  private last: { url: string; body: string; id: string } | undefined;
  private outcome: "acked" | "refused" | undefined;

  /** `browser` gives the (shared) Chromium to open a context in. */
  constructor(
    private readonly browser: () => Promise<Browser>,
    options: BrowserDriverOptions = {},
  ) {
    this.minEditIntervalMs = options.editIntervalMs ?? 100;
  }

  channelConfig(env: { gatewayUrl: string }): Record<string, unknown> {
    this.chatUrl = `${env.gatewayUrl}/chat`;
    return { enabled: true, edit_interval_ms: this.minEditIntervalMs };
  }

  /** The chat page, opened on first use. */
  page(): Promise<Page> {
    this.opened ??= this.open();
    return this.opened;
  }

  async userSays(text: string): Promise<void> {
    const page = await this.page();
    const posted = page.waitForRequest(isMessagePost);
    const composer = page.locator("#composer-text");
    await composer.fill(text);
    await composer.press("Enter");
    const request = await posted;
    const id = (request.postDataJSON() as { id: string }).id;
    this.last = { url: request.url(), body: request.postData() ?? "", id };
    await page.locator(`#messages > [data-role="user"][data-id="${id}"]`).waitFor({ state: "attached" });
    this.outcome = await answered(request);
  }

  async redeliverLast(): Promise<void> {
    const last = this.last;
    if (!last) throw new Error("browser driver: nothing was sent yet");
    const page = await this.page();
    const retry = page.locator(`#messages > [data-role="user"][data-id="${last.id}"] .status button`);
    if ((await retry.count()) > 0) {
      const posted = page.waitForRequest(isMessagePost);
      await retry.click();
      this.outcome = await answered(await posted);
      return;
    }
    const status = await page.evaluate(
      async ({ url, body }) => {
        const init = { method: "POST", headers: { "content-type": "application/json" }, body };
        return (await fetch(url, { ...init, credentials: "same-origin" })).status;
      },
      { url: last.url, body: last.body },
    );
    this.outcome = status >= 200 && status < 300 ? "acked" : "refused";
  }

  async lastDelivery(): Promise<"acked" | "refused"> {
    if (!this.outcome) throw new Error("browser driver: nothing was sent yet");
    return this.outcome;
  }

  async click(label: string): Promise<void> {
    const page = await this.page();
    await eventually(() => this.botMessages().some((m) => m.buttons.includes(label)), 10_000, `a button "${label}"`);
    const button = page
      .locator('#messages > [data-role="assistant"] > .buttons button')
      .filter({ hasText: new RegExp(`^${escapeRe(label)}$`) })
      .last();
    const posted = page.waitForRequest(isActionPost);
    await button.click();
    const response = await (await posted).response();
    if (response?.status() !== 202) {
      throw new Error(`browser driver: clicking "${label}" answered ${response?.status() ?? "nothing"}`);
    }
  }

  botMessages(): VisibleMessage[] {
    return [...this.seen.values()].map((m) => ({ ...m, buttons: [...m.buttons], versions: [...m.versions] }));
  }

  /** Closes the browser context; fails when the page had uncaught errors or CSP refusals. */
  async close(): Promise<void> {
    const problems = (await this.session?.end()) ?? [];
    if (problems.length > 0) throw new Error(`browser driver: the page saw problems:\n${problems.join("\n")}`);
  }

  private async open(): Promise<Page> {
    if (!this.chatUrl) throw new Error("browser driver: channelConfig() was not called, so the gateway's URL is unknown");
    this.session = new PageSession(await this.browser());
    const page = await this.session.newPage();
    await page.exposeBinding(SEEN_BINDING, (_source, report: SeenReport) => this.saw(report));
    await page.addInitScript(WATCH_SCRIPT);
    await openChat(page, this.chatUrl);
    return page;
  }

  /** Takes one report of the page: a new message, or a new version of one whose text changed. */
  private saw(report: SeenReport): void {
    for (const m of report.messages) {
      const known = this.seen.get(m.id);
      if (!known) {
        this.seen.set(m.id, { id: m.id, text: m.text, buttons: m.buttons, versions: [{ text: m.text, at: report.at }] });
        continue;
      }
      known.buttons = m.buttons;
      if (m.text !== known.text) {
        known.text = m.text;
        known.versions.push({ text: m.text, at: report.at });
      }
    }
  }
}

/** What the page's POST got: `acked` for a 2xx, else `refused` (an error status, or no answer). */
async function answered(request: Request): Promise<"acked" | "refused"> {
  const response = await request.response();
  return response?.ok() ? "acked" : "refused";
}
