/** The fake Discord refuses what Discord refuses and serves the real discord.js: these tests drive discord.js itself. */

import { Client, GatewayIntentBits, type Message, Partials, Routes } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../../src/testing/wait.js";
import { type DiscordDriver, discordDriver } from "../fakes/discord/driver.js";
import { ALICE, BOB, CAROL, CHANNELS, FakeDiscord, type FakeOptions } from "../fakes/discord/index.js";
import { readMarkdown } from "../fakes/discord/markdown.js";

const ADAPTER_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.DirectMessages,
  GatewayIntentBits.MessageContent,
];
const WITHOUT_CONTENT = ADAPTER_INTENTS.filter((i) => i !== GatewayIntentBits.MessageContent);

const fakes: FakeDiscord[] = [];
const clients: Client[] = [];

const drivers: DiscordDriver[] = [];

afterEach(async () => {
  // discord.js's destroy() can wait out an identify it has queued (up to its throttle) on a busy
  // machine; the fake closes below either way, so a client is given a few seconds, not the hook's minute.
  const destroyed = (c: Client) => Promise.race([c.destroy(), new Promise<void>((r) => setTimeout(r, 5_000))]);
  await Promise.all(clients.splice(0).map(destroyed));
  await Promise.all(fakes.splice(0).map((f) => f.close()));
  await Promise.all(drivers.splice(0).map((d) => d.close()));
});

async function start(options: FakeOptions = {}): Promise<FakeDiscord> {
  const fake = await FakeDiscord.start(options);
  fakes.push(fake);
  return fake;
}

function client(fake: FakeDiscord, intents = ADAPTER_INTENTS): Client {
  const c = new Client({ intents, partials: [Partials.Channel], rest: { api: fake.apiBase } });
  clients.push(c);
  return c;
}

async function ready(fake: FakeDiscord, intents = ADAPTER_INTENTS): Promise<Client> {
  const c = client(fake, intents);
  const isReady = new Promise<void>((resolve) => c.once("clientReady", () => resolve()));
  await c.login(fake.token);
  await isReady;
  return c;
}

function nextMessage(c: Client): Promise<Message> {
  return new Promise((resolve) => c.once("messageCreate", resolve));
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  await eventually(check, timeoutMs, what);
}

async function status(p: Promise<unknown>): Promise<{ status?: number; code?: number }> {
  try {
    await p;
    return {};
  } catch (err) {
    const e = err as { status?: number; code?: number | string };
    return { status: e.status, code: typeof e.code === "number" ? e.code : undefined };
  }
}

describe("fake discord: gateway", () => {
  it("logs discord.js in and caches the guild's channels", async () => {
    const fake = await start();
    const c = await ready(fake);
    expect(c.user?.id).toBe(fake.bot.id);
    const names = c.channels.cache.map((ch) => ("name" in ch ? ch.name : undefined));
    expect(names).toEqual(expect.arrayContaining(["general", "random", "help"]));
    expect(c.channels.cache.get(CHANNELS.help)?.type).toBe(15);
    expect(fake.identifies).toBe(1);
  });

  it("delivers a DM and a mentioned guild message with their content", async () => {
    const fake = await start();
    const c = await ready(fake);
    const dm = nextMessage(c);
    fake.dm(ALICE, "hello in private");
    const got = await dm;
    expect(got.content).toBe("hello in private");
    expect(got.channel.isDMBased()).toBe(true);
    expect(got.author.id).toBe(ALICE.id);
    const mention = nextMessage(c);
    fake.say(CHANNELS.general, BOB, "are you there?", { mention: true });
    const m = await mention;
    expect(m.content).toBe(`<@${fake.bot.id}> are you there?`);
    expect(m.mentions.users.has(c.user!.id)).toBe(true);
    expect(m.guildId).toBe(c.guilds.cache.first()?.id);
  });

  it("empties unmentioned guild messages without the MessageContent intent", async () => {
    const fake = await start({ privilegedIntents: false });
    const c = await ready(fake, WITHOUT_CONTENT);
    const plain = nextMessage(c);
    fake.say(CHANNELS.general, BOB, "nobody asked the bot");
    expect((await plain).content).toBe("");
    const mentioned = nextMessage(c);
    fake.say(CHANNELS.general, BOB, "now I ask", { mention: true });
    expect((await mentioned).content).toContain("now I ask");
    const dm = nextMessage(c);
    fake.dm(ALICE, "DMs keep content");
    expect((await dm).content).toBe("DMs keep content");
  });

  it("closes with 4014 when MessageContent is asked for but not enabled", async () => {
    const fake = await start({ privilegedIntents: false });
    await expect(client(fake).login(fake.token)).rejects.toThrow(/disallowed intents/i);
    expect(fake.identifies).toBe(0);
  });

  it("refuses a bad token before the Gateway", async () => {
    const fake = await start();
    await expect(client(fake).login("not-the-token")).rejects.toMatchObject({ code: "TokenInvalid" });
    expect(fake.calls.at(-1)).toMatchObject({ path: "/gateway/bot", status: 401 });
    expect(fake.gateway.connections).toHaveLength(0);
  });
});

describe("fake discord: REST", () => {
  it("records sends and edits with every version", async () => {
    const fake = await start();
    const c = await ready(fake);
    const dm = fake.dmChannelOf(ALICE);
    const sent = (await c.rest.post(Routes.channelMessages(dm), { body: { content: "**Hi** there" } })) as { id: string };
    await c.rest.patch(Routes.channelMessage(dm, sent.id), { body: { content: "**Hi** there, Alice" } });
    await c.rest.patch(Routes.channelMessage(dm, sent.id), { body: { content: "**Hi** there, Alice" } });
    const [m] = fake.messagesIn(dm);
    expect(m?.text).toBe("Hi there, Alice");
    expect(m?.versions.map((v) => v.text)).toEqual(["Hi there", "Hi there, Alice"]);
  });

  it("refuses 2001 characters with 50035 and an empty message with 50006", async () => {
    const fake = await start();
    const c = await ready(fake);
    const channel = fake.dmChannelOf(ALICE);
    expect(await status(c.rest.post(Routes.channelMessages(channel), { body: { content: "x".repeat(2001) } }))).toEqual({
      status: 400,
      code: 50035,
    });
    expect(await status(c.rest.post(Routes.channelMessages(channel), { body: { content: "" } }))).toEqual({
      status: 400,
      code: 50006,
    });
    expect(await status(c.rest.post(Routes.channelMessages("1"), { body: { content: "hi" } }))).toEqual({
      status: 404,
      code: 10003,
    });
  });

  it("starts one thread per message (160004 for a second)", async () => {
    const fake = await start();
    const c = await ready(fake);
    const created = new Promise((resolve) => c.once("threadCreate", resolve));
    const m = fake.say(CHANNELS.general, ALICE, "start here", { mention: true });
    const body = { name: "start here", auto_archive_duration: 1440 };
    const thread = (await c.rest.post(Routes.threads(CHANNELS.general, m.id), { body })) as { id: string; type: number };
    expect(thread).toMatchObject({ id: m.id, type: 11 });
    await created;
    expect(fake.threads()).toEqual([expect.objectContaining({ id: m.id, parentId: CHANNELS.general })]);
    expect(await status(c.rest.post(Routes.threads(CHANNELS.general, m.id), { body }))).toEqual({ status: 400, code: 160004 });
  });

  it("waits out a forced 429 before calling the route again", async () => {
    const fake = await start();
    const c = await ready(fake);
    const channel = fake.dmChannelOf(ALICE);
    fake.rateLimitNext("POST /channels/:id/messages", 1500);
    const began = Date.now();
    await c.rest.post(Routes.channelMessages(channel), { body: { content: "after the limit" } });
    expect(Date.now() - began).toBeGreaterThanOrEqual(1500);
    const calls = fake.calls.filter((x) => x.path === `/channels/${channel}/messages`);
    expect(calls.map((x) => x.status)).toEqual([429, 200]);
    expect(fake.earlyCalls()).toEqual([]);
  });
});

describe("fake discord: interactions", () => {
  it("answers a click once (40060) and only within the token's life (10062)", async () => {
    const fake = await start({ interactionTokenTtlMs: 300 });
    const c = await ready(fake);
    const channel = fake.dmChannelOf(ALICE);
    const components = [{ type: 1, components: [{ type: 2, style: 1, label: "Yes", custom_id: "q:yes" }] }];
    const q = (await c.rest.post(Routes.channelMessages(channel), { body: { content: "Sure?", components } })) as { id: string };
    const clicks: Array<{ id: string; token: string }> = [];
    c.on("interactionCreate", (i) => void clicks.push({ id: i.id, token: i.token }));
    fake.click(q.id, "Yes", ALICE);
    await until(() => clicks.length === 1, "the click");
    const first = clicks[0]!;
    const callback = Routes.interactionCallback(first.id, first.token);
    await c.rest.post(callback, { body: { type: 7, data: { content: "Sure? Yes", components: [] } }, auth: false });
    expect(await status(c.rest.post(callback, { body: { type: 6 }, auth: false }))).toEqual({ status: 400, code: 40060 });
    expect(fake.messagesIn(channel)[0]).toMatchObject({ text: "Sure? Yes", buttons: [] });

    await c.rest.patch(Routes.channelMessage(channel, q.id), { body: { components } });
    fake.click(q.id, "Yes", ALICE);
    await until(() => clicks.length === 2, "the second click");
    await new Promise((r) => setTimeout(r, 400));
    const late = clicks[1]!;
    expect(
      await status(c.rest.post(Routes.interactionCallback(late.id, late.token), { body: { type: 6 }, auth: false })),
    ).toEqual({ status: 404, code: 10062 });
  });
});

describe("fake discord: interaction answers", () => {
  it("fills a deferred ephemeral reply through @original and posts follow-ups", async () => {
    const fake = await start();
    const c = await ready(fake);
    const q = (await c.rest.post(Routes.channelMessages(CHANNELS.general), {
      body: { content: "Pick", components: QUESTION },
    })) as {
      id: string;
    };
    const answered = new Promise<void>((resolve) =>
      c.once("interactionCreate", async (i) => {
        if (!i.isButton()) return;
        await i.deferReply({ flags: 64 });
        await i.editReply("Only you see **this**");
        await i.followUp({ content: "Everyone sees this" });
        await i.followUp({ content: "Also private", flags: 64 });
        resolve();
      }),
    );
    fake.click(q.id, "Red", BOB);
    await answered;
    expect(fake.ephemeralFor(BOB.id)).toEqual(["Only you see this", "Also private"]);
    expect(fake.ephemeralFor(ALICE.id)).toEqual([]);
    expect(fake.messagesIn(CHANNELS.general).map((m) => m.text)).toEqual(["Pick", "Everyone sees this"]);
    expect(fake.interactionCallbacks.map((x) => x.type)).toEqual([5]);
  });

  it("serves typing, the bot's user and application, and a DM channel for a doctor check", async () => {
    const fake = await start();
    const c = await ready(fake);
    const dm = await c.users.createDM(ALICE.id);
    await dm.sendTyping();
    expect(fake.typings).toEqual([{ channelId: fake.dmChannelOf(ALICE), at: expect.any(Number) }]);
    const app = await c.application!.fetch();
    expect(app.id).toBe(fake.applicationId);
    expect((await c.users.fetch("@me", { force: true })).bot).toBe(true);
    expect(fake.calls.every((x) => x.status < 400)).toBe(true);
  });
});

describe("fake discord: resume", () => {
  it("resumes after a dropped connection and delivers what was sent meanwhile, once", async () => {
    const fake = await start();
    const c = await ready(fake);
    const seen: string[] = [];
    c.on("messageCreate", (m) => void seen.push(m.content));
    fake.dropConnection();
    await until(() => fake.gateway.connected === 0, "the drop");
    fake.dm(ALICE, "sent while you were away");
    await until(() => seen.length > 0, "the replayed DM");
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toEqual(["sent while you were away"]);
    expect(fake.resumes).toBe(1);
    expect(fake.identifies).toBe(1);
    expect(fake.gateway.connections.at(-1)?.path).toBe("/resume");
  });

  it("identifies afresh after a non-resumable invalid session", async () => {
    const fake = await start();
    await ready(fake);
    fake.invalidSession(false);
    // discord.js waits 1–5 s, then its identify throttle up to 5 s more: slow on a busy machine.
    await until(() => fake.identifies === 2, "the second identify", 25_000);
    expect(fake.resumes).toBe(0);
  });
});

const QUESTION = [
  { type: 1, components: ["Red", "Blue"].map((label) => ({ type: 2, style: 1, label, custom_id: `q:${label}` })) },
];

describe("fake discord: faults", () => {
  it("refuses malformed buttons with 50035 and another's message edit with 50005", async () => {
    const fake = await start();
    const c = await ready(fake);
    const channel = fake.dmChannelOf(ALICE);
    const button = (custom_id: string, label = "Go") => ({ type: 2, style: 1, label, custom_id });
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 1, components: [button(`b${i}`)] }));
    const cases = [
      rows(6),
      [{ type: 1, components: Array.from({ length: 6 }, (_, i) => button(`b${i}`)) }],
      [{ type: 1, components: [button("x".repeat(101))] }],
      [{ type: 1, components: [button("same"), button("same")] }],
      [{ type: 1, components: [button("long", "L".repeat(81))] }],
    ];
    for (const components of cases) {
      expect(await status(c.rest.post(Routes.channelMessages(channel), { body: { content: "q", components } }))).toEqual({
        status: 400,
        code: 50035,
      });
    }
    const hers = fake.dm(ALICE, "mine");
    expect(await status(c.rest.patch(Routes.channelMessage(channel, hers.id), { body: { content: "x" } }))).toEqual({
      status: 403,
      code: 50005,
    });
    expect(await status(c.rest.patch(Routes.channelMessage(channel, "1"), { body: { content: "x" } }))).toEqual({
      status: 404,
      code: 10008,
    });
  });

  it("retries an injected 500, holds every call during a global 429, and refuses a revoked token", async () => {
    const fake = await start();
    const c = await ready(fake);
    const channel = fake.dmChannelOf(ALICE);
    fake.failNext("POST /channels/*/messages", 500);
    await c.rest.post(Routes.channelMessages(channel), { body: { content: "second try" } });
    expect(fake.calls.filter((x) => x.method === "POST").map((x) => x.status)).toEqual([500, 200]);
    fake.rateLimitNext("GET /channels/:id", 1000, { global: true });
    const first = c.rest.get(Routes.channel(channel));
    await until(() => fake.calls.some((x) => x.status === 429), "the global 429");
    // Another route, asked for while the global limit holds: discord.js keeps it back too.
    await Promise.all([first, c.rest.get(Routes.user("@me"))]);
    expect(fake.calls.filter((x) => x.status === 429)).toHaveLength(1);
    expect(fake.earlyCalls()).toEqual([]);
    const shutdown = new Promise((resolve) => c.once("shardDisconnect", (event) => resolve(event.code)));
    fake.revokeToken();
    expect(await shutdown).toBe(4004);
    expect(await status(c.rest.get(Routes.user("@me")))).toMatchObject({ status: 401 });
  });

  it("enforces the global limit and records calls that ignore a 429", async () => {
    const fake = await start({ rateLimits: { globalPerSecond: 3 } });
    const auth = { authorization: `Bot ${fake.token}` };
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await fetch(`${fake.apiBase}/v10/users/@me`, { headers: auth })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(fake.earlyCalls()).toHaveLength(1);
    const limited = await fetch(`${fake.apiBase}/v10/users/@me`, { headers: auth });
    expect(limited.headers.get("x-ratelimit-global")).toBe("true");
    expect(await limited.json()).toMatchObject({ global: true, message: "You are being rate limited." });
  });

  it("resumes on op 7 and on a resumable op 9 without identifying again", async () => {
    const fake = await start();
    const c = await ready(fake);
    fake.requestReconnect();
    await until(() => fake.resumes === 1, "the resume after op 7");
    fake.invalidSession(true);
    await until(() => fake.resumes === 2, "the resume after op 9");
    const dm = nextMessage(c);
    fake.dm(ALICE, "still here");
    expect((await dm).content).toBe("still here");
    expect(fake.identifies).toBe(1);
  });

  it("dispatches a forum post, a slash command and a redelivery", async () => {
    const fake = await start();
    const c = await ready(fake);
    await c.rest.put(Routes.applicationCommands(fake.applicationId), { body: [{ name: "status", description: "Show status" }] });
    expect(fake.commands.get("global")).toEqual([expect.objectContaining({ name: "status", type: 1 })]);
    const post = nextMessage(c);
    const starter = fake.forumPost(ALICE, "Need help", "how do I start?", { mention: true });
    const m = await post;
    expect(m.channelId).toBe(starter.id);
    expect(m.channel.isThread() && m.channel.parentId).toBe(CHANNELS.help);
    const command = new Promise<string>((resolve) =>
      c.once("interactionCreate", (i) => resolve(i.isChatInputCommand() ? i.commandName : "other")),
    );
    fake.slash(CHANNELS.general, BOB, "status");
    expect(await command).toBe("status");
    const again = new Promise<string>((resolve) =>
      c.once("interactionCreate", (i) => resolve(i.isChatInputCommand() ? i.commandName : "other")),
    );
    fake.redeliverLast();
    expect(await again).toBe("status");
  });
});

describe("fake discord: contract driver", () => {
  /** A tiny bot written with raw discord.js, standing in for an adapter. */
  async function bot(driver: DiscordDriver): Promise<Client> {
    const config = driver.channelConfig({ gatewayUrl: "http://127.0.0.1:1" });
    const c = new Client({ intents: ADAPTER_INTENTS, partials: [Partials.Channel], rest: { api: String(config.api_base) } });
    clients.push(c);
    c.on("messageCreate", async (m) => {
      if (m.author.bot) return;
      if (m.channel.isDMBased()) {
        const reply = await m.channel.send("Thinking");
        await reply.edit("Thinking **hard**");
        await m.channel.send({ content: "Which colour?", components: QUESTION });
      } else if (m.mentions.users.has(c.user!.id) && !m.channel.isThread()) {
        const thread = await m.startThread({ name: "colours" });
        await thread.send({ content: "Which colour, team?", components: QUESTION });
      }
    });
    c.on("interactionCreate", async (i) => {
      if (!i.isButton()) return;
      if (i.guildId && i.user.id === BOB.id) await i.reply({ content: "Only the asker can answer this question.", flags: 64 });
      else await i.update({ content: `Picked ${i.customId.slice(2)}`, components: [] });
    });
    await c.login(String(config.bot_token));
    return c;
  }

  it("sees a DM conversation and its button the way Alice does", async () => {
    const driver = await discordDriver({});
    drivers.push(driver);
    expect(driver.channelConfig({ gatewayUrl: "" })).toEqual({
      enabled: true,
      bot_token: driver.fake.token,
      application_id: driver.fake.applicationId,
      api_base: driver.fake.apiBase,
      gateway_url: driver.fake.gatewayUrl,
      edit_interval_ms: 300,
      thread: true,
    });
    await bot(driver);
    await driver.userSays("hello");
    expect(await driver.lastDelivery()).toBe("acked");
    await until(() => driver.botMessages().length === 2, "the bot's replies");
    expect(driver.botMessages()[0]?.versions.map((v) => v.text)).toEqual(["Thinking", "Thinking hard"]);
    await driver.click("Blue");
    await until(() => driver.botMessages()[1]?.text === "Picked Blue", "the updated question");
    expect(driver.botMessages()[1]?.buttons).toEqual([]);
    await driver.botEcho("from the bot itself");
    expect(driver.botMessages().some((m) => m.text.includes("from the bot itself"))).toBe(false);
  });

  it("follows the group into the thread the bot starts, with private refusals", async () => {
    const driver = await discordDriver({ thread: true });
    drivers.push(driver);
    await bot(driver);
    const group = driver.group;
    await group.says("asker", "help us choose");
    await until(() => group.botMessages().some((m) => m.buttons.length === 2), "the question in the thread");
    expect(group.botMessages()[0]?.threadId).toBe(driver.fake.threads()[0]?.id);
    await group.click("other", "Red");
    await until(() => group.shownOnlyTo("other").length === 1, "the refusal");
    expect(group.shownOnlyTo("other")).toEqual(["Only the asker can answer this question."]);
    expect(group.shownOnlyTo("asker")).toEqual([]);
    await group.click("approver", "Blue");
    await until(() => group.botMessages()[0]?.text === "Picked Blue", "the approver's answer");
    expect(group.userId("approver")).toBe(CAROL.id);
  });
});

describe("fake discord: markdown reader", () => {
  it("reads what a person sees", () => {
    const names = { userName: (id: string) => (id === "42" ? "Alice" : undefined) };
    expect(readMarkdown("**bold** *it* _it_ __under__ ~~gone~~ `co*de*`", names)).toBe("bold it it under gone co*de*");
    expect(readMarkdown("# Title\n## Sub\n-# small\n> quoted\n- one\n* two\n1. three")).toBe(
      "Title\nSub\nsmall\nquoted\n- one\n* two\n1. three",
    );
    expect(readMarkdown("```ts\nconst a = **1**;\n```")).toBe("const a = **1**;");
    expect(readMarkdown("[docs](https://example.com/a_b) and <https://x.dev/y_z_>")).toBe("docs and https://x.dev/y_z_");
    expect(readMarkdown("hi <@42> and <@!7>, \\*not italic\\*", names)).toBe("hi @Alice and @unknown-user, *not italic*");
    expect(readMarkdown(">>> all\nof this")).toBe("all\nof this");
    expect(readMarkdown("snake_case_name stays")).toBe("snake_case_name stays");
  });
});
