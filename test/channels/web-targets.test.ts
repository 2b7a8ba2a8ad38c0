/**
 * Sending first on the web chat: a target names one browser's conversation; a message sent while
 * no page is open waits in the mailbox and shows in the history, in its place.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Channel } from "../../src/channels/types.js";
import { ChannelError, TargetUnreachableError } from "../../src/errors.js";
import { eventually, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { newConversationId, WebBrowser } from "../fakes/web/client.js";
import type { ChatTab } from "../fakes/web/tab.js";

let gw: TestGateway | undefined;
const tabs: ChatTab[] = [];

afterEach(async () => {
  for (const tab of tabs.splice(0)) await tab.close();
  await gw?.stop();
  gw = undefined;
});

async function boot(): Promise<{ g: TestGateway; web: Channel; browser: WebBrowser }> {
  gw = await startTestGateway({ channels: { web: { enabled: true, edit_interval_ms: 50 } } });
  const web = gw.gateway.slot("web")?.channel;
  if (!web?.resolveTarget) throw new Error("the web channel has no resolveTarget");
  return { g: gw, web, browser: new WebBrowser(`http://127.0.0.1:${gw.port}/chat`) };
}

async function open(browser: WebBrowser, conv: string): Promise<ChatTab> {
  const tab = browser.tab(conv);
  tabs.push(tab);
  return tab.open();
}

describe("web chat resolveTarget", () => {
  it("resolves <client>/<conversation> to the conversation an open page follows", async () => {
    const { web, browser } = await boot();
    const conv = newConversationId();
    const tab = await open(browser, conv);
    const client = await browser.clientId();
    const ref = await web.resolveTarget?.({ chat: `${client}/${conv}` });
    expect(ref).toMatchObject({ key: `web:${client}:${conv}`, chatId: `${client}/${conv}`, chatType: "direct" });
    const same = await web.resolveTarget?.({ chat: conv, workspace: client });
    expect(same?.key).toBe(ref?.key);
    await web.send(ref as NonNullable<typeof ref>, { text: "A **heads-up** from the API." });
    await eventually(() => tab.messages.find((m) => m.markdown === "A **heads-up** from the API."), 5_000, "the message");
    // The page's own messages run in the same conversation: the reply arrives in the same tab.
    await tab.say("thanks");
    await eventually(() => tab.messages.find((m) => m.markdown === "ok: thanks"), 15_000, "the reply");
  });

  it("keeps a message sent while no page is open, and the page shows it when it opens", async () => {
    const { web, browser } = await boot();
    const conv = newConversationId();
    const client = await browser.clientId();
    const ref = await web.resolveTarget?.({ chat: `${client}/${conv}` });
    await web.send(ref as NonNullable<typeof ref>, { text: "Your report is ready." });
    const tab = await open(browser, conv);
    expect(tab.history?.messages.map((m) => [m.role, m.text])).toEqual([["assistant", "Your report is ready."]]);
    // Later events do not repeat it.
    await tab.say("show me");
    await eventually(() => tab.messages.find((m) => m.markdown === "ok: show me"), 15_000, "the reply");
    expect(tab.messages.filter((m) => m.markdown === "Your report is ready.")).toHaveLength(0);
  });

  it("places a sent message between the turns around it after a reload, and does not repeat replies", async () => {
    const { web, browser } = await boot();
    const conv = newConversationId();
    const tab = await open(browser, conv);
    await tab.say("first");
    await eventually(() => tab.messages.find((m) => m.markdown === "ok: first"), 15_000, "the first reply");
    const client = await browser.clientId();
    const ref = await web.resolveTarget?.({ chat: `${client}/${conv}` });
    // As the outbox sends it: with an idempotency key, so it is kept although a page is open.
    await web.send(ref as NonNullable<typeof ref>, { text: "A reminder in between." }, { idempotencyKey: "outbox-1:0" });
    await tab.say("second");
    await eventually(() => tab.messages.find((m) => m.markdown === "ok: second"), 15_000, "the second reply");
    const texts = async () => (await browser.history(conv)).messages.map((m) => m.text);
    await eventually(async () => (await texts()).length === 5, 5_000, "the history with the reminder");
    expect(await texts()).toEqual(["first", "ok: first", "A reminder in between.", "second", "ok: second"]);
  });

  it("refuses a user target and a malformed chat with clear errors", async () => {
    const { web } = await boot();
    await expect(web.resolveTarget?.({ user: "someone" })).rejects.toBeInstanceOf(ChannelError);
    await expect(web.resolveTarget?.({ user: "someone" })).rejects.toThrow(/cannot reach a user/);
    await expect(web.resolveTarget?.({ chat: "short" })).rejects.toBeInstanceOf(TargetUnreachableError);
    await expect(web.resolveTarget?.({ chat: newConversationId() })).rejects.toThrow(/client id/);
  });
});
