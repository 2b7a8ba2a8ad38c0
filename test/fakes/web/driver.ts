/**
 * ContractDriver over the web chat: one browser (its own client-id cookie) with one tab open on
 * one conversation, talking to the gateway's own HTTP server. The tab opens on the first thing
 * the user does (the gateway is not up when the driver is made), loading the history first as
 * the page does. A delivery is `acked` when the messages route answers 2xx; a redelivery posts the
 * same client message id again. The web has no bot echo (nothing but the page posts into a
 * conversation, and only as the user), so the driver has no `botEcho` and the contract skips
 * that test; it has no groups either (see web.contract.test.ts). A file is sent as the page
 * sends it: uploaded first, then named by the message that carries its caption.
 */
import { randomUUID } from "node:crypto";
import type { BotFile, ContractDriver, UserFile, VisibleMessage } from "../../contract/driver.js";
import { eventually } from "../../contract/gateway.js";
import { newConversationId, WebBrowser } from "./client.js";
import type { ChatTab } from "./tab.js";

export interface WebDriverOptions {
  /** `channels.web.edit_interval_ms` (default 100). */
  editIntervalMs?: number;
  /** More `channels.web` keys. */
  config?: Record<string, unknown>;
}

export class WebDriver implements ContractDriver {
  readonly channelName = "web";
  readonly streams = true;
  readonly buttons = true;
  readonly webhook = false;
  readonly minEditIntervalMs: number;
  readonly conv = newConversationId("contract");
  private browserAt: WebBrowser | undefined;
  private opened: Promise<ChatTab> | undefined;
  private last: { id: string; text: string; files?: unknown[] } | undefined;
  private outcome: "acked" | "refused" | undefined;
  private current: ChatTab | undefined;

  constructor(private readonly options: WebDriverOptions = {}) {
    this.minEditIntervalMs = options.editIntervalMs ?? 100;
  }

  channelConfig(env: { gatewayUrl: string }): Record<string, unknown> {
    const config: Record<string, unknown> = { enabled: true, edit_interval_ms: this.minEditIntervalMs, ...this.options.config };
    const path = typeof config.path === "string" ? config.path : "/chat";
    this.browserAt = new WebBrowser(`${env.gatewayUrl}${path}`);
    return config;
  }

  get browser(): WebBrowser {
    if (!this.browserAt) throw new Error("web driver: channelConfig() was not called, so the gateway's URL is unknown");
    return this.browserAt;
  }

  /** The tab, opened on first use. */
  tab(): Promise<ChatTab> {
    this.opened ??= this.browser
      .tab(this.conv)
      .open()
      .then((tab) => {
        this.current = tab;
        return tab;
      });
    return this.opened;
  }

  async userSays(text: string): Promise<void> {
    await this.tab();
    this.last = { id: randomUUID(), text };
    await this.post();
  }

  async userSendsFile(file: UserFile): Promise<void> {
    const tab = await this.tab();
    const response = await tab.upload(file.name, file.mime, file.data);
    let named: unknown;
    // Over the limit, the page names the file instead of uploading it, and the core refuses it.
    if (response.status === 413) named = { name: file.name, size: file.data.byteLength, mime: file.mime };
    else if (response.status === 201) named = ((await response.json()) as { id: string }).id;
    else throw new Error(`web driver: the upload answered ${response.status}: ${await response.text()}`);
    this.last = { id: randomUUID(), text: file.caption ?? "", files: [named] };
    await this.post();
  }

  async redeliverLast(): Promise<void> {
    if (!this.last) throw new Error("web driver: nothing was sent yet");
    await this.post();
  }

  async lastDelivery(): Promise<"acked" | "refused"> {
    if (!this.outcome) throw new Error("web driver: nothing was sent yet");
    return this.outcome;
  }

  async click(label: string): Promise<void> {
    const tab = await this.tab();
    await eventually(() => tab.messages.some((m) => m.buttons.some((b) => b.label === label)), 10_000, `a button "${label}"`);
    const response = await tab.click(label);
    if (response.status !== 202)
      throw new Error(`web driver: clicking "${label}" answered ${response.status}: ${await response.text()}`);
  }

  botMessages(): VisibleMessage[] {
    return this.current?.visible() ?? [];
  }

  botFiles(): BotFile[] {
    return this.current?.botFiles() ?? [];
  }

  /** Closes the tab; fails when the page was given HTML it must not render, or an unreadable event. */
  async close(): Promise<void> {
    const tab = this.current;
    await tab?.close();
    if (tab && tab.problems.length > 0) throw new Error(`web driver: the page saw problems:\n${tab.problems.join("\n")}`);
  }

  private async post(): Promise<void> {
    const last = this.last as { id: string; text: string; files?: unknown[] };
    const tab = await this.tab();
    const response = await tab.say(last.text, last.id, last.files);
    await response.body?.cancel();
    this.outcome = response.status >= 200 && response.status < 300 ? "acked" : "refused";
  }
}
