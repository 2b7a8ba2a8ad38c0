/**
 * Memory per person end to end (issue 33): a whole gateway (dispatcher, renderer, storage,
 * embedded agent with `features.memory` on the mock model) on the fake Bot API, on SQLite and on
 * PostgreSQL. Ada tells the bot where she lives; the extraction (scripted on the mock model)
 * keeps it; after `/new` the model's request carries the fact and the reply uses it; `/memory`
 * lists it and forgets it; another user and another tenant never see it (in the model's
 * requests); it survives a restart.
 *
 * The mock model answers from what it is sent: "where do I live?" is answered from a "Lives in …"
 * line of the request, so the reply uses the fact only if the request carried it.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { NOTICES } from "../../src/core/notices.js";
import type { ChatCompletionRequest } from "../../src/testing/mock-model.js";
import { eventually, freePort, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { contentText, lastUserText, type MockModel, startMockModel } from "../fakes/openai.js";
import { ALICE, BOB, TEAM_GROUP, TelegramDriver } from "../fakes/telegram/driver.js";
import type { FakeUser } from "../fakes/telegram/index.js";
import { freshSchema } from "../helpers/postgres.js";

const EXTRACTION = "You keep a short list of lasting facts";
const isExtraction = (req: ChatCompletionRequest) => contentText(req.messages[0]?.content).includes(EXTRACTION);
const INTRO = "my name is Ada and I live in Lisbon";

/** The model: facts from Ada's introduction, and answers read off the request it is sent. */
function scriptModel(model: MockModel): void {
  model.setDefault((req) => {
    const newest = lastUserText(req);
    if (isExtraction(req)) {
      const add = newest.includes(INTRO)
        ? [
            { text: "Is called Ada", category: "identity" },
            { text: "Lives in Lisbon", category: "location" },
          ]
        : [];
      return { text: JSON.stringify({ add, update: [], remove: [] }) };
    }
    if (newest.endsWith("where do I live?")) {
      const city = /Lives in (\w+)/.exec(newest)?.[1];
      return { text: city ? `You live in ${city}.` : "I don't know where you live." };
    }
    if (newest.endsWith("what's my name?")) {
      const name = /Is called (\w+)/.exec(newest)?.[1];
      return { text: name ? `You are ${name}.` : "I don't know your name." };
    }
    return { text: "Nice to meet you." };
  });
}

let gateway: TestGateway | undefined;
const drivers: TelegramDriver[] = [];
let model: MockModel | undefined;
afterEach(async () => {
  await gateway?.stop(false);
  for (const d of drivers.splice(0)) await d.close();
  await model?.close();
  gateway = undefined;
  model = undefined;
});

interface World {
  home: TelegramDriver;
  away: TelegramDriver;
  tenants: { home: string; away: string };
  boot(): Promise<TestGateway>;
}

async function world(storage: Record<string, unknown> | undefined): Promise<World> {
  model = await startMockModel();
  scriptModel(model);
  const home = await TelegramDriver.start({ mode: "polling", editIntervalMs: 50 });
  const away = await TelegramDriver.start({ mode: "polling", editIntervalMs: 50 });
  drivers.push(home, away);
  // Tenants of their own on a shared database, so no other test's rows are in their schemas.
  const suffix = randomBytes(3).toString("hex");
  const tenants = { home: `home_${suffix}`, away: `away_${suffix}` };
  const port = await freePort();
  const gatewayUrl = `http://127.0.0.1:${port}`;
  const mock = model;
  let dir: string | undefined;
  return {
    home,
    away,
    tenants,
    async boot() {
      const gw = await startTestGateway({
        channels: {
          telegram: home.channelConfig({ gatewayUrl }),
          telegram_away: { use: "telegram", ...away.channelConfig({ gatewayUrl }) },
        },
        model: mock,
        port,
        ...(dir ? { dir } : {}),
        ...(storage ? { storage } : {}),
        agent: { features: { memory: true, dynamic_context: true } },
        sections: { tenants: { [tenants.home]: { channels: ["telegram"] }, [tenants.away]: { channels: ["telegram_away"] } } },
      });
      dir = gw.dir;
      gateway = gw;
      return gw;
    },
  };
}

/** What `user` sees from the bot on `driver`, once `text` is there. */
async function botSays(driver: TelegramDriver, user: FakeUser, text: string | RegExp): Promise<string> {
  const found = await eventually(
    () => driver.fake.botMessages(user.id).find((m) => (typeof text === "string" ? m.text === text : text.test(m.text))),
    15_000,
    `the bot saying ${String(text)} to ${user.first_name}`,
  );
  return found.text;
}

/** `user` sends `text` on `driver` and waits for `reply`; returns the chat model's requests of that turn. */
async function turn(
  driver: TelegramDriver,
  user: FakeUser,
  text: string,
  reply: string | RegExp,
): Promise<ChatCompletionRequest[]> {
  const mark = model!.requests.length;
  const before = driver.fake.botMessages(user.id).length;
  await driver.deliver(driver.fake.dm(user, text));
  await eventually(
    () =>
      driver.fake
        .botMessages(user.id)
        .slice(before)
        .some((m) => (typeof reply === "string" ? m.text === reply : reply.test(m.text))),
    15_000,
    `the reply to "${text}"`,
  );
  return model!.requests.slice(mark).filter((r) => !isExtraction(r));
}

async function memorySettled(gw: TestGateway, tenant: string): Promise<void> {
  const harness = await gw.gateway.agentDirectory!.harness(tenant, "default");
  await harness.memory!.settled();
}

const seen = (requests: ChatCompletionRequest[]) => requests.map((r) => JSON.stringify(r.messages)).join("\n");

async function scenario(storage: Record<string, unknown> | undefined): Promise<void> {
  const w = await world(storage);
  const { home, away } = w;
  let gw = await w.boot();

  await turn(home, ALICE, INTRO, "Nice to meet you.");
  await memorySettled(gw, w.tenants.home);
  await home.deliver(home.fake.dm(ALICE, "/new"));
  await botSays(home, ALICE, NOTICES.newThread);

  const asked = await turn(home, ALICE, "where do I live?", "You live in Lisbon.");
  expect(asked).toHaveLength(1);
  const newest = lastUserText(asked[0]!);
  expect(newest).toMatch(/<context>\n[\s\S]*- \[[0-9a-f]{6}\] Lives in Lisbon\n[\s\S]*<\/context>\n\nwhere do I live\?$/);
  // A new thread: the introduction itself is not in the history, only the remembered fact.
  expect(seen(asked)).not.toContain(INTRO);

  await home.deliver(home.fake.dm(ALICE, "/memory"));
  const list = await botSays(home, ALICE, /What I remember about you/);
  expect(list).toMatch(/1\. ?Is called Ada\n2\. ?Lives in Lisbon/);
  await home.deliver(home.fake.dm(ALICE, "/help"));
  expect(await botSays(home, ALICE, /Commands:/)).toContain("/memory — what I remember about you");
  // In a group the list would be read by everyone: memory is off there by default.
  await home.deliver(home.fake.say(TEAM_GROUP, ALICE, `/memory@${home.fake.bot.username}`));
  await eventually(() => home.fake.botMessages(TEAM_GROUP.id).some((m) => m.text === "I don't use memory in group chats here."));
  await home.deliver(home.fake.dm(ALICE, "/memory forget 2"));
  await botSays(home, ALICE, "Forgot: Lives in Lisbon");

  // The next request's context block no longer has it (the thread's history keeps what was said)...
  const after = await turn(home, ALICE, "where do I live?", "I don't know where you live.");
  expect(lastUserText(after[0]!)).not.toContain("Lisbon");
  expect(lastUserText(after[0]!)).toContain("Is called Ada");
  // ...and a new thread has nothing of it at all.
  await home.deliver(home.fake.dm(ALICE, "/new"));
  await eventually(() => home.fake.botMessages(ALICE.id).filter((m) => m.text === NOTICES.newThread).length === 2);
  const fresh = await turn(home, ALICE, "where do I live?", "I don't know where you live.");
  expect(seen(fresh)).not.toContain("Lisbon");

  // Another user of the same bot, and the same user in another tenant: nothing of Ada's.
  const bobs = await turn(home, BOB, "what's my name?", "I don't know your name.");
  expect(seen(bobs)).not.toMatch(/Ada|Lisbon/);
  const elsewhere = await turn(away, ALICE, "what's my name?", "I don't know your name.");
  expect(seen(elsewhere)).not.toMatch(/Is called Ada|Lisbon/);

  // A restart: the fact is read back from the storage.
  await memorySettled(gw, w.tenants.home);
  await gw.stop(false);
  gateway = undefined;
  gw = await w.boot();
  const restarted = await turn(home, ALICE, "what's my name?", "You are Ada.");
  expect(lastUserText(restarted[0]!)).toContain("Is called Ada");
  await home.deliver(home.fake.dm(ALICE, "/memory forget all"));
  await botSays(home, ALICE, /I forgot everything I remembered about you \(1 thing\)/);
  await turn(home, ALICE, "what's my name?", "I don't know your name.");
}

describe("telegram: memory per person", () => {
  it("SQLite: remembered after /new, listed and forgotten with /memory, kept from other users and tenants, kept across a restart", async () => {
    await scenario(undefined);
  });

  it("PostgreSQL: the same", async () => {
    const { url } = await freshSchema("mem");
    await scenario({ kind: "postgres", url });
  });

  it("/memory says so where memory is off, and /help lists it only where it is on", async () => {
    const w = await world(undefined);
    const gw = await startTestGateway({
      channels: { telegram: w.home.channelConfig({ gatewayUrl: "http://127.0.0.1:1" }) },
      model: model!,
    });
    gateway = gw;
    await w.home.deliver(w.home.fake.dm(ALICE, "/memory"));
    await botSays(w.home, ALICE, "I don't keep a memory of people in this chat: memory is off for its agent.");
    await w.home.deliver(w.home.fake.dm(ALICE, "/help"));
    const help = await botSays(w.home, ALICE, /Commands:/);
    expect(help).not.toContain("/memory");
  });
});
