/** The fake Discord refuses what Discord refuses and serves the real discord.js: these tests drive discord.js itself. */
import { Client, GatewayIntentBits, type Message, Partials, Routes } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { ALICE, BOB, CHANNELS, FakeDiscord, type FakeOptions } from "../fakes/discord/index.js";
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

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  await Promise.all(fakes.splice(0).map((f) => f.close()));
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
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
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
    await until(() => fake.identifies === 2, "the second identify", 12_000);
    expect(fake.resumes).toBe(0);
  }, 20_000);
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
