/**
 * The Discord adapter beyond the contract: server threads, mentions, forum posts, sessions per
 * user, a dropped Gateway, 429s, slash commands, close codes and the doctor check, through a
 * whole gateway and the real discord.js against the fake Discord.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DiscordChannel } from "../../src/channels/discord/index.js";
import type { Channel, ChannelContext } from "../../src/channels/types.js";
import { silentLogger } from "../../src/log/logger.js";
import { eventually, freePort, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { DiscordDriver, type DiscordDriverOptions } from "../fakes/discord/driver.js";
import { ALICE, BOB, CHANNELS, type FakeOptions, GUILD_ID, type MessageView } from "../fakes/discord/index.js";
import { lastUserText } from "../fakes/openai.js";

const INTERVAL = 200;
const LONG =
  "Discord shows this answer growing by edits of one message in the thread. Every edit must " +
  "differ from the one before, and the last version must be this exact text, to the final word.";

let driver: DiscordDriver | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await driver?.close();
  gw = undefined;
  driver = undefined;
});

async function boot(options: DiscordDriverOptions = {}): Promise<{ driver: DiscordDriver; gw: TestGateway }> {
  driver = await DiscordDriver.start({ editIntervalMs: INTERVAL, ...options });
  const port = await freePort();
  gw = await startTestGateway({ channels: { discord: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) }, port });
  return { driver, gw };
}

function channelOf(gw: TestGateway): Channel {
  const channel = gw.gateway.slot("discord")?.channel;
  if (!channel) throw new Error("the discord channel did not load");
  return channel;
}

const byBot = (driver: DiscordDriver, channelId: string): MessageView[] =>
  driver.fake.messagesIn(channelId).filter((m) => m.author.id === driver.fake.bot.id && !m.injected);

describe("discord in a server", () => {
  it("starts a thread from a mention and streams the reply there in edits, ending exact", async () => {
    const { driver, gw } = await boot();
    // A model slow to start: the thread shows "typing…" while the user waits.
    gw.model.enqueue({ text: LONG, chunkSize: 6, delayMs: 20, firstByteMs: 900 });
    const asked = driver.fake.say(CHANNELS.general, ALICE, "explain threads to me please", { mention: true });
    const reply = await eventually(() => byBot(driver, asked.id).find((m) => m.text === LONG), 20_000, "the final reply");
    expect(driver.fake.threads()).toContainEqual(expect.objectContaining({ id: asked.id, parentId: CHANNELS.general }));
    expect(driver.fake.threads().find((t) => t.id === asked.id)?.name).toBe("explain threads to me please");
    expect(reply.versions.length - 1, "edits after the first post").toBeGreaterThanOrEqual(2);
    for (let i = 1; i < reply.versions.length; i++) expect(reply.versions[i]!.text).not.toBe(reply.versions[i - 1]!.text);
    expect(lastUserText(gw.model.requests.at(-1)!)).toBe("explain threads to me please");
    expect(byBot(driver, CHANNELS.general), "nothing is posted in the channel itself").toEqual([]);
    expect(driver.fake.typings.map((t) => t.channelId)).toContain(asked.id);
  });

  it("ignores unmentioned channel messages, and needs no mention for follow-ups in its thread", async () => {
    const { driver, gw } = await boot();
    driver.fake.say(CHANNELS.general, BOB, "just chatting among humans");
    await sleep(400);
    expect(gw.model.requests).toHaveLength(0);
    gw.model.enqueue({ text: "First answer." }, { text: "Second answer." });
    const asked = driver.fake.say(CHANNELS.general, ALICE, "first question", { mention: true });
    await eventually(() => byBot(driver, asked.id).some((m) => m.text === "First answer."), 10_000, "the first answer");
    driver.fake.say(asked.id, ALICE, "and a follow-up without a mention");
    await eventually(() => byBot(driver, asked.id).some((m) => m.text === "Second answer."), 10_000, "the second answer");
    const history = gw.model.requests.at(-1)!.messages.map((m) => m.content);
    expect(history).toContain("first question");
    expect(
      driver.fake.threads().filter((t) => t.parentId === CHANNELS.general),
      "one thread, not two",
    ).toHaveLength(1);
  });

  it("continues one conversation in a DM", async () => {
    const { driver, gw } = await boot();
    gw.model.enqueue({ text: "Hello Alice." }, { text: "You said hello." });
    await driver.userSays("hello");
    await eventually(() => driver.botMessages().some((m) => m.text === "Hello Alice."), 10_000, "the first reply");
    await driver.userSays("what did I say?");
    await eventually(() => driver.botMessages().some((m) => m.text === "You said hello."), 10_000, "the second reply");
    expect(gw.model.requests.at(-1)!.messages.map((m) => m.content)).toEqual(
      expect.arrayContaining(["hello", "Hello Alice.", "what did I say?"]),
    );
  });

  it("answers a question in its thread by button, and the next by text", async () => {
    const { driver, gw } = await boot();
    gw.model.enqueue(
      { toolCalls: [{ name: "ask_clarification", args: { question: "Which colour?", options: ["Red", "Blue"] } }] },
      { text: "Blue it is." },
      { toolCalls: [{ name: "ask_clarification", args: { question: "Which size?", options: ["S", "M"] } }] },
      { text: "M noted." },
    );
    const asked = driver.fake.say(CHANNELS.general, ALICE, "pick for me", { mention: true });
    const question = await eventually(() => byBot(driver, asked.id).find((m) => m.buttons.includes("Blue")), 10_000, "buttons");
    driver.fake.click(question.id, "Blue", ALICE);
    await eventually(() => byBot(driver, asked.id).some((m) => m.text === "Blue it is."), 10_000, "the resumed reply");
    expect(driver.fake.interactionCallbacks.map((c) => c.type)).toContain(6);
    expect(driver.fake.message(question.id)?.buttons, "the answered question loses its buttons").toEqual([]);
    expect(question.text).not.toMatch(/Blue/);
    expect(driver.fake.message(question.id)?.text).toMatch(/Blue/);
    driver.fake.say(asked.id, ALICE, "next one");
    await eventually(() => byBot(driver, asked.id).some((m) => m.buttons.includes("M")), 10_000, "the second question");
    driver.fake.say(asked.id, ALICE, "M");
    await eventually(() => byBot(driver, asked.id).some((m) => m.text === "M noted."), 10_000, "the text-resumed reply");
  });

  it("answers a forum post inside the post", async () => {
    const { driver, gw } = await boot();
    gw.model.enqueue({ text: "Answered in the post." });
    const post = driver.fake.forumPost(ALICE, "Help with setup", "how do I set this up?", { mention: true });
    await eventually(() => byBot(driver, post.channelId).some((m) => m.text === "Answered in the post."), 10_000, "the answer");
    expect(driver.fake.threads().filter((t) => t.parentId === CHANNELS.help)).toHaveLength(1);
  });

  it("with thread: false and session_scope: user, answers in the channel with one conversation per user", async () => {
    const { driver, gw } = await boot({ thread: false, scope: "user" });
    gw.model.enqueue({ text: "Hi Alice." }, { text: "Hi Bob." });
    const a = driver.fake.say(CHANNELS.general, ALICE, "I am Alice", { mention: true });
    await eventually(() => byBot(driver, CHANNELS.general).some((m) => m.text === "Hi Alice."), 10_000, "Alice's reply");
    driver.fake.say(CHANNELS.general, BOB, "I am Bob", { mention: true });
    await eventually(() => byBot(driver, CHANNELS.general).some((m) => m.text === "Hi Bob."), 10_000, "Bob's reply");
    const bobsRequest = gw.model.requests.at(-1)!.messages.map((m) => m.content);
    expect(bobsRequest, "Bob's conversation does not hold Alice's words").not.toContain("I am Alice");
    expect(byBot(driver, CHANNELS.general).find((m) => m.text === "Hi Alice.")?.referenceId).toBe(a.id);
    expect(driver.fake.threads()).toEqual([]);
  });

  it("skips servers and channels outside its allowlists", async () => {
    const { driver } = await boot({ config: { allowed_channels: [CHANNELS.random] } });
    if (!gw) throw new Error("no gateway");
    driver.fake.say(CHANNELS.general, ALICE, "not here", { mention: true });
    await sleep(400);
    expect(gw.model.requests).toHaveLength(0);
    gw.model.enqueue({ text: "Here I answer." });
    const asked = driver.fake.say(CHANNELS.random, ALICE, "here", { mention: true });
    await eventually(() => byBot(driver, asked.id).some((m) => m.text === "Here I answer."), 10_000, "the reply in random");
    await gw.stop();
    const config = { ...driver.channelConfig({ gatewayUrl: "" }), allowed_guilds: ["1"] };
    const other = await startTestGateway({ channels: { discord: config }, port: await freePort() });
    gw = other;
    driver.fake.say(CHANNELS.random, ALICE, "another server only", { mention: true });
    await sleep(400);
    expect(other.model.requests).toHaveLength(0);
  });

  it("answers in the channel, quoting the message, where it may not start a thread", async () => {
    const { driver, gw } = await boot();
    driver.fake.failNext("POST /channels/:id/messages/:id/threads", 403, 50013);
    gw.model.enqueue({ text: "No thread, but an answer." });
    const asked = driver.fake.say(CHANNELS.general, ALICE, "hello", { mention: true });
    const reply = await eventually(
      () => byBot(driver, CHANNELS.general).find((m) => m.text === "No thread, but an answer."),
      10_000,
      "the reply in the channel",
    );
    expect(reply.referenceId).toBe(asked.id);
    expect(channelOf(gw).status().lastError?.message).toMatch(/Create Public Threads/);
  });
});

describe("discord gateway and limits", () => {
  it("resumes a dropped Gateway connection and answers what was sent meanwhile, once", async () => {
    const { driver, gw } = await boot();
    gw.model.enqueue({ text: "Before the drop." }, { text: "After the drop." });
    await driver.userSays("before");
    await eventually(() => driver.botMessages().some((m) => m.text === "Before the drop."), 10_000, "the first reply");
    driver.fake.dropConnection();
    driver.fake.dm(ALICE, "sent while the bot was away");
    await eventually(() => driver.botMessages().some((m) => m.text === "After the drop."), 15_000, "the reply after resuming");
    await sleep(300);
    expect(driver.fake.resumes).toBe(1);
    expect(driver.fake.identifies).toBe(1);
    expect(gw.model.requests.filter((r) => lastUserText(r) === "sent while the bot was away")).toHaveLength(1);
    expect(channelOf(gw).status()).toMatchObject({ state: "running", connected: true });
  });

  it("honours a 429 on edits: no call before retry_after, and the reply still ends exact", async () => {
    const { driver, gw } = await boot();
    driver.fake.rateLimitNext("PATCH /channels/:id/messages/:id", 1200);
    gw.model.enqueue({ text: LONG, chunkSize: 6, delayMs: 20 });
    await driver.userSays("stream despite limits");
    await eventually(() => driver.botMessages().some((m) => m.text === LONG), 20_000, "the final reply");
    expect(
      driver.fake.calls.some((c) => c.status === 429),
      "the fake did answer 429",
    ).toBe(true);
    expect(driver.fake.earlyCalls()).toEqual([]);
  });

  it("honours a global 429: nothing goes out on any route before it has passed", async () => {
    const { driver, gw } = await boot();
    driver.fake.rateLimitNext("POST /channels/:id/messages", 1000, { global: true });
    gw.model.enqueue({ text: "Globally limited, then delivered." });
    await driver.userSays("global limit");
    await eventually(() => driver.botMessages().some((m) => m.text === "Globally limited, then delivered."), 15_000, "reply");
    expect(driver.fake.earlyCalls()).toEqual([]);
  });

  it("registers slash commands in its server and runs /help from one", async () => {
    const { driver } = await boot({ config: { register_commands: "guild" } });
    const names = (driver.fake.commands.get(GUILD_ID) ?? []).map((c) => (c as { name: string }).name);
    expect(names.sort()).toEqual(["agent", "help", "new", "status", "stop"]);
    expect(driver.fake.commands.has("global")).toBe(false);
    driver.fake.slash(CHANNELS.general, ALICE, "help");
    await eventually(() => driver.fake.ephemeralFor(ALICE.id).some((t) => t.includes("/help")), 5_000, "the ephemeral ack");
    await eventually(() => byBot(driver, CHANNELS.general).some((m) => m.text.includes("/new")), 10_000, "the help text");
  });

  it("registers slash commands globally, where DMs can use them too", async () => {
    const { driver } = await boot({ config: { register_commands: "global" } });
    expect((driver.fake.commands.get("global") ?? []).length).toBe(5);
    driver.fake.slash(driver.dmChannel, ALICE, "status");
    await eventually(() => driver.fake.ephemeralFor(ALICE.id).some((t) => t.includes("/status")), 5_000, "the ephemeral ack");
    await eventually(() => driver.botMessages().length > 0, 10_000, "the status");
  });

  it("tries again when the core cannot record a message, and tells the user when it never can", async () => {
    const { driver, gw } = await boot();
    const store = gw.gateway.bindingStore!;
    const record = store.recordInbound.bind(store);
    let failures = 1;
    store.recordInbound = async (entry) => {
      if (failures-- > 0) throw new Error("disk full");
      return record(entry);
    };
    gw.model.enqueue({ text: "Recorded on the second try." });
    await driver.userSays("record me");
    await eventually(() => driver.botMessages().some((m) => m.text === "Recorded on the second try."), 10_000, "the reply");
    failures = 10;
    await driver.userSays("never recorded");
    await eventually(
      () => driver.botMessages().some((m) => m.text === "I couldn't take your message just now. Please send it again."),
      10_000,
      "the notice",
    );
    expect(gw.model.requests.filter((r) => lastUserText(r) === "never recorded")).toHaveLength(0);
  });
});

describe("discord credentials and intents", () => {
  function bare(fake: { token: string; apiBase: string; gatewayUrl: string }, token = fake.token): Channel {
    const ctx = {
      name: "discord",
      config: DiscordChannel.configSchema.parse({ bot_token: token, api_base: fake.apiBase, gateway_url: fake.gatewayUrl }),
      logger: silentLogger(),
      http: { route() {}, unroute() {} },
      baseDir: ".",
    } as unknown as ChannelContext<never>;
    return new DiscordChannel(ctx);
  }

  async function withFake<T>(options: FakeOptions, run: (d: DiscordDriver) => Promise<T>): Promise<T> {
    driver = await DiscordDriver.start({ fake: options });
    return run(driver);
  }

  it("explains a missing Message Content intent (close 4014) at start and in doctor", async () => {
    await withFake({ privilegedIntents: false }, async (d) => {
      const channel = bare(d.fake);
      const err = await channel.start(async () => {}).catch((e: unknown) => e);
      expect(String(err)).toMatch(/4014.*Message Content Intent/);
      await expect(channel.check!()).rejects.toThrow(/Message Content Intent/);
      await channel.stop();
    });
  });

  it("explains a bad token at start and in doctor, and a token revoked mid-session (close 4004)", async () => {
    await withFake({}, async (d) => {
      const wrong = bare(d.fake, "not-the-token");
      await expect(wrong.start(async () => {})).rejects.toThrow(/bot token/);
      await expect(wrong.check!()).rejects.toThrow(/bot token/);
      await wrong.stop();
      const channel = bare(d.fake);
      await channel.start(async () => {});
      expect(await channel.check!()).toMatch(/^@antler \(bot id \d+/);
      d.fake.revokeToken();
      await eventually(() => channel.status().state === "failed", 10_000, "the failed state");
      expect(channel.status().reason ?? channel.status().lastError?.message).toMatch(/4004.*Reset Token/);
      await channel.stop();
    });
  });
});
