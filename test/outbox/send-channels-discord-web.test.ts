/**
 * `POST /api/send` through a whole gateway (SQLite, the outbox worker) on Discord and the web
 * chat: a channel and a DM reached in the platform's format with its message ids, closed DMs
 * failing with Discord's reason, replays posting nothing, and a web conversation with no page
 * open showing the message when its history is read. Slack, Feishu, DingTalk: send-channels.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eventually, freePort, sleep, type TestGateway } from "../contract/gateway.js";
import { DiscordDriver } from "../fakes/discord/driver.js";
import { ALICE, BOB, CHANNELS, GUILD_ID } from "../fakes/discord/index.js";
import { newConversationId, WebBrowser } from "../fakes/web/client.js";
import type { ChatTab } from "../fakes/web/tab.js";
import { MARKDOWN, type SendClient, sendBody, sendGateway, VISIBLE } from "./send-client.js";

let gw: TestGateway | undefined;
const tabs: ChatTab[] = [];
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const tab of tabs.splice(0)) await tab.close();
  await gw?.stop();
  gw = undefined;
  for (const close of closers.splice(0)) await close();
});

async function gateway(channels: Record<string, Record<string, unknown>>, port?: number): Promise<SendClient> {
  const started = await sendGateway(channels, port);
  gw = started.gw;
  return started.api;
}

describe("discord", () => {
  async function boot(): Promise<{ driver: DiscordDriver; api: SendClient }> {
    const driver = await DiscordDriver.start({ editIntervalMs: 200 });
    closers.push(() => driver.close());
    const port = await freePort();
    const api = await gateway({ discord: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) }, port);
    return { driver, api };
  }
  const byBot = (d: DiscordDriver, channelId: string) =>
    d.fake.messagesIn(channelId).filter((m) => m.author.id === d.fake.bot.id && !m.injected);

  it("posts in a server channel and in a DM, in Discord's Markdown, with Discord's message ids", async () => {
    const { driver, api } = await boot();
    const inChannel = await api.settled(sendBody("discord", { chat: CHANNELS.general }, MARKDOWN), "discord-chat");
    expect(inChannel).toMatchObject({ state: "sent", conversation: `discord:${GUILD_ID}:${CHANNELS.general}` });
    const posted = byBot(driver, CHANNELS.general);
    expect(posted.map((m) => m.text)).toEqual([VISIBLE]);
    expect(posted[0]?.content).toContain("**Deploy**");
    expect(posted[0]?.threadId).toBeUndefined();
    expect(inChannel.message_ids).toEqual([posted[0]?.id]);

    const dm = await api.settled(sendBody("discord", { user: ALICE.id }, "Your build is **green**."), "discord-dm");
    const dmChannel = driver.fake.dmChannelOf(ALICE);
    expect(dm).toMatchObject({ state: "sent", conversation: `discord:@me:${dmChannel}` });
    const inDm = byBot(driver, dmChannel);
    expect(inDm.map((m) => [m.content, m.text])).toEqual([["Your build is **green**.", "Your build is green."]]);
    expect(dm.message_ids).toEqual([inDm[0]?.id]);
  });

  it("fails a send to closed DMs with Discord's 50007, which GET shows, and posts nothing", async () => {
    const { driver, api } = await boot();
    driver.fake.closeDms(BOB);
    // Opening the DM works; only the post is refused, so the entry is accepted and then fails.
    const failed = await api.settled(sendBody("discord", { user: BOB.id }, "hello?"), "discord-bob");
    expect(failed.state).toBe("failed");
    expect(failed.error_code).toBe("unreachable");
    expect(String(failed.error)).toMatch(/50007|Cannot send messages to this user/);
    expect(failed.message_ids).toBeUndefined();
    await sleep(300);
    expect(byBot(driver, driver.fake.dmChannelOf(BOB))).toEqual([]);
    // A channel Discord does not know is refused before anything is stored.
    const unknown = await api.send(sendBody("discord", { chat: "1180000000000000999" }, "hello?"), "discord-unknown");
    expect(unknown.status).toBe(422);
    expect(String(unknown.body.error)).toMatch(/10003|Unknown Channel/i);
  });

  it("posts with a nonce Discord enforces, and a replayed request posts nothing new", async () => {
    const { driver, api } = await boot();
    const body = sendBody("discord", { chat: CHANNELS.random }, "Daily **digest**");
    const first = await api.settled(body, "discord-once");
    expect(first.state).toBe("sent");
    const posts = driver.fake.calls.filter((c) => c.method === "POST" && c.route === "/channels/:channel/messages");
    expect(posts).toHaveLength(1);
    expect(posts[0]?.body).toMatchObject({ nonce: expect.any(String), enforce_nonce: true });
    const again = await api.send(body, "discord-once");
    expect(again).toMatchObject({ status: 200, replayed: true, body: { id: first.id, state: "sent" } });
    await sleep(500);
    expect(byBot(driver, CHANNELS.random).map((m) => m.text)).toEqual(["Daily digest"]);
  });
});

describe("web chat", () => {
  async function boot(): Promise<{ api: SendClient; browser: WebBrowser }> {
    const api = await gateway({ web: { enabled: true, edit_interval_ms: 50 } });
    return { api, browser: new WebBrowser(`${gw?.url}/chat`) };
  }

  async function open(browser: WebBrowser, conv: string): Promise<ChatTab> {
    const tab = browser.tab(conv);
    tabs.push(tab);
    return tab.open();
  }

  it("keeps a message for a conversation with no page open, and the page shows it from the history", async () => {
    const { api, browser } = await boot();
    const client = await browser.clientId();
    const conv = newConversationId();
    const shown = await api.settled(sendBody("web", { chat: `${client}/${conv}` }, MARKDOWN), "web-closed");
    expect(shown).toMatchObject({ state: "sent", conversation: `web:${client}:${conv}` });
    expect(shown.message_ids).toHaveLength(1);
    const tab = await open(browser, conv);
    const history = tab.history?.messages ?? [];
    expect(history.map((m) => [m.role, m.text])).toEqual([["assistant", MARKDOWN]]);
    // Drawn as formatted HTML.
    expect(history[0]?.html).toContain("<strong>Deploy</strong>");
    expect(history[0]?.html).toContain("<code>42</code>");
    expect(shown.message_ids).toEqual([history[0]?.id]);
    // Another browser (another client id) sees nothing of it.
    const other = new WebBrowser(`${gw?.url}/chat`);
    expect(await other.clientId()).not.toBe(client);
    expect((await other.history(conv)).messages).toEqual([]);
  });

  it("shows a send at once on an open page, posts nothing new for a replay, and refuses a user target", async () => {
    const { api, browser } = await boot();
    const client = await browser.clientId();
    const conv = newConversationId();
    const tab = await open(browser, conv);
    const body = sendBody("web", { chat: conv, workspace: client }, "A **heads-up** from the API.");
    const first = await api.settled(body, "web-open");
    expect(first.state).toBe("sent");
    const live = await eventually(
      () => tab.messages.find((m) => m.markdown === "A **heads-up** from the API."),
      15_000,
      "the message",
    );
    expect(live.text).toBe("A heads-up from the API.");
    const again = await api.send(body, "web-open");
    expect(again).toMatchObject({ status: 200, replayed: true, body: { id: first.id } });
    await sleep(500);
    expect(tab.messages.filter((m) => m.markdown === "A **heads-up** from the API.")).toHaveLength(1);
    expect((await browser.history(conv)).messages.map((m) => m.text)).toEqual(["A **heads-up** from the API."]);

    const user = await api.send(sendBody("web", { user: client }, "hi"), "web-user");
    expect(user.status).toBe(422);
    expect(String(user.body.error)).toMatch(/cannot reach a user/);
    const malformed = await api.send(sendBody("web", { chat: "short" }, "hi"), "web-short");
    expect(malformed.status).toBe(422);
    expect((await browser.history(conv)).messages).toHaveLength(1);
  });
});
